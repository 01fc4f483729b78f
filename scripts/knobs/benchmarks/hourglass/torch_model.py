"""The stacked hourglass in PyTorch, laid out as Newell's Torch7 code."""

import torch
from torch import nn

from knobs.benchmarks.hourglass.network import DEPTH, RMSPROP


def batch_norm(channels):
    """Batch statistics in every phase, as the TensorFlow model: no running averages."""
    return nn.BatchNorm2d(channels, eps=1e-5, track_running_stats=False)


def conv_bn_relu(cin, cout, k, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2), batch_norm(cout), nn.ReLU())


class Residual(nn.Module):
    """Bottleneck: BN, ReLU, 1x1 -> BN, ReLU, 3x3 -> BN, ReLU, 1x1; 1x1 skip if widths differ."""

    def __init__(self, cin, cout):
        super().__init__()
        mid = cout // 2
        self.body = nn.Sequential(
            batch_norm(cin), nn.ReLU(), nn.Conv2d(cin, mid, 1),
            batch_norm(mid), nn.ReLU(), nn.Conv2d(mid, mid, 3, padding=1),
            batch_norm(mid), nn.ReLU(), nn.Conv2d(mid, cout, 1))
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        return self.body(x) + self.skip(x)


class Hourglass(nn.Module):
    def __init__(self, depth, f):
        super().__init__()
        self.up1 = Residual(f, f)
        self.low1 = Residual(f, f)
        self.low2 = Hourglass(depth - 1, f) if depth > 1 else Residual(f, f)
        self.low3 = Residual(f, f)

    def forward(self, x):
        low = self.low3(self.low2(self.low1(nn.functional.max_pool2d(x, 2))))
        return self.up1(x) + nn.functional.interpolate(low, scale_factor=2, mode="nearest")


class StackedHourglass(nn.Module):
    def __init__(self, stacks, features=256, joints=16):
        super().__init__()
        f = features
        self.stem = nn.Sequential(conv_bn_relu(3, 64, 7, 2), Residual(64, 128), nn.MaxPool2d(2),
                                  Residual(128, 128), Residual(128, f))
        self.hourglasses = nn.ModuleList(
            nn.Sequential(Hourglass(DEPTH, f), Residual(f, f), conv_bn_relu(f, f, 1))
            for _ in range(stacks))
        self.heads = nn.ModuleList(nn.Conv2d(f, joints, 1) for _ in range(stacks))
        self.merge_features = nn.ModuleList(nn.Conv2d(f, f, 1) for _ in range(stacks - 1))
        self.merge_heatmaps = nn.ModuleList(nn.Conv2d(joints, f, 1) for _ in range(stacks - 1))

    def forward(self, x):
        """Heatmaps of every stack, stacked: (stacks, batch, joints, H/4, W/4)."""
        inter = self.stem(x)
        outputs = []
        for i, (hourglass, head) in enumerate(zip(self.hourglasses, self.heads)):
            features = hourglass(inter)
            heatmaps = head(features)
            outputs.append(heatmaps)
            if i < len(self.heads) - 1:  # remap into the trunk for the next stack
                inter = inter + self.merge_features[i](features) + self.merge_heatmaps[i](heatmaps)
        return torch.stack(outputs)


def loss_fn(outputs, target):
    """MSE on every stack's heatmaps (intermediate supervision)."""
    return ((outputs - target.unsqueeze(0)) ** 2).mean()


def optimizer(model):
    return torch.optim.RMSprop(model.parameters(), lr=RMSPROP["lr"], alpha=RMSPROP["rho"],
                               eps=RMSPROP["eps"])


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())
