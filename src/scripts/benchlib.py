"""What the bench-*.sh scripts share: the decode workload, llama-bench's per-repetition figures, and the
median / ratio / spread arithmetic, written once. The scripts' inline Python imports it (bench-workload.sh puts
this directory on PYTHONPATH); bash uses its command line:

    python3 benchlib.py workload BENCH MODEL REPS [ARG...]   the decode workload's command, one word a line
    python3 benchlib.py samples FILE     llama-bench -o jsonl output -> each repetition's tokens/s, comma-separated
    python3 benchlib.py selftest         the examples below, checked

Figures are printed as "median (min-max)" (spread) or "median [min..max]" (spread_brackets): a median with its
whole range, never a lone number, since runs on a busy machine move by more than the costs measured.
"""
import json
import statistics
import sys

#: The decode workload every bench script runs (llama-bench, prompt-free, 64 generated tokens, 2 threads).
DECODE_ARGS = ["-p", "0", "-n", "64", "-t", "2"]


def decode_workload(bench, model, reps, *extra):
    """The llama-bench command line that decodes the bench model `reps` times.

    >>> decode_workload("llama-bench", "m.gguf", 5, "-o", "jsonl")
    ['llama-bench', '-m', 'm.gguf', '-p', '0', '-n', '64', '-t', '2', '-r', '5', '-o', 'jsonl']
    """
    return [bench, "-m", model, *DECODE_ARGS, "-r", str(reps), *extra]


def samples_ts(text):
    """Each repetition's tokens/s from llama-bench's `-o jsonl` output: the last result line's samples_ts.

    >>> samples_ts('noise\\n{"samples_ts": [1.0, 2.5]}\\n{"n_gen": 64, "samples_ts": [70.5, 71.5]}\\n')
    [70.5, 71.5]
    >>> samples_ts("no result")
    []
    """
    found = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "samples_ts" in row:
            found = [float(x) for x in row["samples_ts"]]
    return found


def ratio(values, base):
    """The mean of `values` over the mean of `base`; None where either is empty or base is 0.

    >>> ratio([90, 110], [200, 200])
    0.5
    >>> ratio([], [1]) is None
    True
    """
    if not values or not base:
        return None
    mean_base = statistics.mean(base)
    return None if mean_base == 0 else statistics.mean(values) / mean_base


def neighbour_ratios(means, traced):
    """Each traced block's mean over the mean of the untraced blocks either side.

    `means` maps a block number to its mean; `traced(block)` says whether infertop was attached during it.
    A traced block without an untraced block on both sides is left out.

    >>> neighbour_ratios({0: 100.0, 1: 90.0, 2: 80.0, 3: 70.0}, lambda b: b % 2 == 1)
    [1.0]
    """
    return [mean / ((means[b - 1] + means[b + 1]) / 2)
            for b, mean in sorted(means.items())
            if traced(b) and b - 1 in means and b + 1 in means and not traced(b - 1) and not traced(b + 1)]


def spread(values, digits=3):
    """ "median (min-max)".

    >>> spread([1.02, 0.98, 1.1])
    '1.020 (0.980-1.100)'
    """
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def spread_brackets(values, digits=2):
    """ "median [min..max]".

    >>> spread_brackets([1.2, 1.15, 1.42])
    '1.20 [1.15..1.42]'
    """
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}..{max(values):.{digits}f}]"


def quartiles(values):
    """The first and third quartiles; with fewer than 4 values, the min and max.

    >>> quartiles([1, 2, 3, 4, 5, 6, 7, 8])
    (2.25, 6.75)
    >>> quartiles([1, 3])
    (1, 3)
    """
    if len(values) < 4:
        return min(values), max(values)
    q = statistics.quantiles(values, n=4)
    return q[0], q[-1]


def _main(argv):
    if len(argv) >= 5 and argv[1] == "workload" and argv[4].isdigit():
        print("\n".join(decode_workload(argv[2], argv[3], int(argv[4]), *argv[5:])))
        return 0
    if len(argv) == 3 and argv[1] == "samples":
        with open(argv[2], encoding="utf-8", errors="replace") as f:
            print(",".join(f"{x:g}" for x in samples_ts(f.read())))
        return 0
    if len(argv) == 2 and argv[1] == "selftest":
        import doctest
        failed, tried = doctest.testmod(sys.modules[__name__])
        print(f"benchlib: {tried - failed} of {tried} examples hold")
        return 1 if failed or tried == 0 else 0
    print("usage: benchlib.py workload BENCH MODEL REPS [ARG...] | samples FILE | selftest", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
