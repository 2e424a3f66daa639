"""What the shell benchmarks' Python parts share: rank correlation and the one result line.

Import it with the folder on sys.path (bench/common)."""
import statistics
import subprocess


def ranks(values):
    """1-based ranks of values, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return r


def spearman(a, b):
    """Spearman's rank correlation of a and b (0 when either is constant)."""
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / den if den > 0 else 0.0


def figure(bench_figure, bench, value, unit, anchor_value, target, anchor="target",
           invalid=False):
    """Prints one result line (bench/common/result.h) through the bench_figure binary."""
    cmd = [bench_figure, "--bench", bench, "--value", repr(float(value)), "--unit", unit,
           "--anchor", anchor, "--anchor-value", repr(float(anchor_value)), "--target", target]
    if invalid:
        cmd.append("--invalid")
    print(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout, end="")
