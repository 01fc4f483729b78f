"""A training step of PyTorch's own Transformer encoder (`torch.nn.TransformerEncoder`): a
model no one here wrote, built from the library with no weights to download, for `make search`
to try the knobs on (config/transformer.yaml). Params: width, heads, layers, length (tokens
per sequence), batch.
"""

import torch


class Benchmark:
    def __init__(self, params, device, seed):
        torch.manual_seed(seed)
        self.device = torch.device("cuda" if device == "gpu" else "cpu")
        width = params.get("width", 256)
        layer = torch.nn.TransformerEncoderLayer(
            width, params.get("heads", 4), dim_feedforward=4 * width, dropout=0.0,
            batch_first=True)
        self.model = torch.nn.TransformerEncoder(
            layer, params.get("layers", 4), enable_nested_tensor=False).to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        shape = (params.get("batch", 16), params.get("length", 128), width)
        self.x = torch.randn(shape, device=self.device)
        self.target = torch.randn(shape, device=self.device)

    def setup(self, case):
        def step():
            self.optimizer.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(self.model(self.x).float(), self.target)
            loss.backward()
            self.optimizer.step()
            return loss.item()  # waits for the step (a GPU's too)

        return step

    def versions(self):
        return {"torch": torch.__version__}
