"""autotune's sitecustomize: `autotune apply` puts this folder first on PYTHONPATH so that a
PyTorch DDP training script gets the tuned bucket sizes without being edited (the pattern of
ddtrace-run and coverage). It imports nothing heavy: torch is patched only if and when the
script imports torch.nn.parallel.distributed. Then it runs the sitecustomize it shadows."""
import os
import sys


def _autotune_setup():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from autotune_torch import ddp_defaults, launch_env
        launch_env.apply()
        ddp_defaults.install()
    except Exception as e:  # never break the user's interpreter over our hook
        print(f"autotune: sitecustomize: {e}", file=sys.stderr)
    # Chain to the next sitecustomize on the path (e.g. Debian's), as if ours did not exist.
    import importlib.machinery
    import importlib.util
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.origin and os.path.dirname(os.path.abspath(spec.origin)) != here:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_autotune_setup()
