"""Reference solutions of notebook 11 (see course_utils/solutions/__init__.py)."""

# %% 11.1 nb11.shard_rows
answer = shard_rows(10, 4, 2)  # rows 2 and 6 are dealt out, row 0 fills the third place

nb11.shard_rows.check(answer)


# %% 11.2 nb11.sum_lr
answer = 4 * 0.5  # the all-reduce adds 4 shard gradients, each about the full-batch gradient

nb11.sum_lr.check(answer)


# %% 11.3 nb11.node_command
answer = ("msrun --worker_num=8 --local_worker_num=4 --master_addr=192.168.1.10 --master_port=8118 "
          "--node_rank=1 --log_dir=logs --join=True dp_train.py")

nb11.node_command.check(answer)
