"""How every figure of the workflow is saved: laid out, as PNG (130 dpi: the report and the
README) and as SVG (the paper)."""


def save(fig, png, svg=None, rect=None):
    fig.tight_layout(rect=rect)
    fig.savefig(png, dpi=130)
    if svg:
        fig.savefig(svg)
