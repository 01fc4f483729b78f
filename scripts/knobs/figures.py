"""How every figure of the workflow is saved: laid out, as PNG (130 dpi: the report and the
README) and as SVG (the paper)."""


def save(fig, png, svg=None, rect=None):
    fig.tight_layout(rect=rect)
    fig.savefig(png, dpi=130)
    if svg:  # no date and fixed ids: a figure drawn again from the same data is the same file
        import matplotlib

        with matplotlib.rc_context({"svg.hashsalt": "knobs"}):
            fig.savefig(svg, metadata={"Date": None})


def span(values, form="{}"):
    """'4' when all values are equal, else '3 to 4': e.g. processes per configuration; each
    end written by `form` ('{:+.0%}')."""
    low, high = form.format(min(values)), form.format(max(values))
    return low if low == high else f"{low} to {high}"
