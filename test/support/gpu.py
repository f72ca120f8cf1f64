"""Whether this machine can launch kernels (the GPU tests skip, with this reason, where not)."""


def cuda_gpu_missing():
    """Why a test that launches kernels cannot run here (None: torch sees a CUDA GPU)."""
    try:
        import torch
    except ImportError:
        return "needs torch and a CUDA GPU (torch is not installed)"
    if not torch.cuda.is_available():
        return "needs a CUDA GPU (none visible to torch)"
    return None
