"""hgemm_fused on the H200 against torch in float32: D = act(alpha * A @ B^T + bias) +
residual, NaN-poisoned outputs, fresh inputs, at small shapes, ragged M, N and K (the bias
loaded 8 columns at a time at the right edge, the residual zero-filled by TMA, the store
clipped), an odd number of tile rows (the pair's second tile stores nothing) and several
tiles per CTA (the residual barrier's phase carried across tiles)."""

import pytest

from tilemlir.kernels.gemm_epilogue import hgemm_fused

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")

from gpu_check import check  # noqa: E402  (needs torch)

CASES = [
    ((256, 256, 64), dict()),                                          # bias + gelu_tanh
    ((512, 512, 256), dict(bias=False, activation=None)),              # v7's GEMM
    ((512, 512, 256), dict(activation=None)),                          # bias only
    ((1000, 1000, 512), dict(activation="gelu", residual=True, alpha=0.5)),   # ragged M, N
    ((384, 768, 320), dict(activation="silu", residual=True)),         # odd pair of tile rows
    ((136, 200, 72), dict(activation="relu", BM=64, BN=128)),          # edge inside a window
    ((1024, 1024, 1000), dict(residual=True, fast_math=True, SMS=4)),  # ring and phases wrap
    ((2048, 2048, 2048), dict(residual=True)),
    ((640, 384, 128), dict(bias=False, activation="gelu_tanh", residual=True, alpha=-2.0)),
    # rows that are not whole 16-byte units: masked cp.async loads, direct masked stores
    ((1000, 1003, 512), dict(residual=True, EPILOGUE="direct")),
    ((333, 444, 555), dict(activation="silu")),
    ((7, 4096, 1001), dict(residual=True)), ((2048, 2050, 2047), {}),
    # odd N through the staged epilogue (16-byte stores from staging rows)
    ((1000, 1003, 512), dict(residual=True, EPILOGUE="staged")),
    ((333, 447, 555), dict(activation="silu", EPILOGUE="staged")),
    ((300, 202, 40), dict(residual=True)),      # even N at K <= 64: staged by default too
]


@pytest.fixture(autouse=True)
def _sm90():
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("TMA + wgmma kernels need an sm_90a GPU (Hopper)")


def reference(a, b, bias, residual, activation, alpha):
    x = alpha * (a.float() @ b.float().T)
    if bias is not None:
        x = x + bias.float()
    if activation == "gelu":
        x = F.gelu(x)
    elif activation == "gelu_tanh":
        x = F.gelu(x, approximate="tanh")
    elif activation == "silu":
        x = F.silu(x)
    elif activation == "relu":
        x = F.relu(x)
    if residual is not None:
        x = x + residual.float()
    return x


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("shape, config", CASES,
                         ids=[f"{'x'.join(map(str, s))}-{i}" for i, (s, _) in enumerate(CASES)])
def test_matches_torch(shape, config, dtype):
    m, n, k = shape
    kernel = hgemm_fused(m, n, k, "float16" if dtype == torch.float16 else "bfloat16", **config)
    with_bias, with_residual = config.get("bias", True), config.get("residual", False)
    for _ in range(2):                      # fresh inputs each time
        # A @ B^T of about unit size, so that the activation's curved part is exercised
        a = (torch.randn(m, k, device="cuda") / k ** 0.25).to(dtype)
        b = (torch.randn(n, k, device="cuda") / k ** 0.25).to(dtype)
        bias = torch.randn(n, device="cuda").to(dtype) if with_bias else None
        res = torch.randn(m, n, device="cuda").to(dtype) if with_residual else None
        ref = reference(a, b, bias, res, config.get("activation", "gelu_tanh"),
                        config.get("alpha", 1.0))
        inputs = [a, b] + [t for t in (bias, res) if t is not None]
        tol = 2e-2 if dtype == torch.bfloat16 else 5e-3
        check(kernel, inputs, ref, dtype, rtol=tol, atol=tol)
