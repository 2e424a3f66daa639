"""autotune's PyTorch helpers: DDP's defaults from autotune's environment (ddp_defaults),
Open MPI's rank variables for torch.distributed (launch_env), the workload of a real
model (workload), and a Horovod job's per-rank gradient-ready times (horovod_ready)."""
