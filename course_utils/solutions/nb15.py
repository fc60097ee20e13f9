"""Reference solutions of notebook 15 (see course_utils/solutions/__init__.py)."""


# %% shard_rows
answer = [2, 6, 0]  # rows 2 and 6 are dealt out (2, 2 + 4), then the deal starts again at row 0 to fill the third place

nb15.shard_rows.check(answer)


# %% sum_lr
answer = 0.3 / 4  # the all-reduce adds 4 shard gradients, each about the full-batch gradient: lr * 4 must be 0.3

nb15.sum_lr.check(answer)


# %% reduced_grads
def all_reduced_gradients(grad_fn, x, y, workers, gradients_mean=True):
    per_worker = []
    for rank in range(workers):
        rows = shard_rows(len(x), workers, rank)  # MindSpore's own sharding: dealt out, filled up from the start
        per_worker.append(grad_fn(ms.Tensor(x[rows]), ms.Tensor(y[rows])))
    summed = [sum(g[i] for g in per_worker) for i in range(len(per_worker[0]))]  # the all-reduce (a sum)
    return [g / workers for g in summed] if gradients_mean else summed


answer = all_reduced_gradients

nb15.reduced_grads.check(answer)


# %% functional_dp
with open("dp_exercise.py") as f:  # the scaffold the cell above wrote
    scaffold = f.read()
step_line = next(line for line in scaffold.splitlines() if line.startswith("...  #"))  # its comment: any language
solution_script = scaffold.replace(step_line, """\
all_reduce = ops.AllReduce()  # the sum over all ranks: what the reducer of section 6 does inside


def forward(data, label):
    return loss_fn(net(data), label)


grad_fn = ms.grad(forward, None, optimizer.parameters)


@ms.jit
def step(data, label):
    grads = grad_fn(data, label)
    optimizer(tuple(all_reduce(g) / group_size for g in grads))  # the sum, then the mean


for _ in range(steps):
    step(x_shard, y_shard)""")
with open("dp_exercise_solution.py", "w") as f:
    f.write(solution_script)
answer = "dp_exercise_solution.py"

nb15.functional_dp.check(answer)


# %% node_command
# the first two machines take the ranks 0-3 and 4-7; --node_rank=4 gives this machine's 2 workers 4 * 2 + 0 and + 1
answer = ("msrun --worker_num=10 --local_worker_num=2 --master_addr=192.168.7.21 --master_port=9010 "
          "--node_rank=4 --log_dir=logs --join=True dp_train.py")

nb15.node_command.check(answer)
