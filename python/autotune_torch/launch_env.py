"""Open MPI as a launcher of torch.distributed: RANK, WORLD_SIZE and LOCAL_RANK from Open
MPI's OMPI_COMM_WORLD_* when the launcher did not set them (torchrun sets them itself)."""
import os

_FROM_OMPI = (("RANK", "OMPI_COMM_WORLD_RANK"), ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
              ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"))


def apply():
    if "OMPI_COMM_WORLD_RANK" not in os.environ or "RANK" in os.environ:
        return
    for ours, ompi in _FROM_OMPI:
        if ompi in os.environ:
            os.environ[ours] = os.environ[ompi]
