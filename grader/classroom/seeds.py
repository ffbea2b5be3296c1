"""The class seed: one input seed for a whole batch, stored in its results folder (seed.json) the
first time the class is graded and used again by every resume and every regrade (--only), so
that a student regraded later gets the very inputs the class got. A new one is drawn only with
--new-seed; --seed N sets it (and stores it). A stored result graded under another seed is
graded again (batch.still_to_grade), so the class never mixes seeds.
"""
import datetime as dt
import json
import os

FILE = "seed.json"


class SeedError(Exception):
    """The stored seed cannot be read (one line)."""


def stored(results_dir):
    """The seed stored in results_dir, or None when there is none; SeedError when seed.json is
    there but unreadable (never silently replaced: the class's inputs would change)."""
    path = os.path.join(results_dir, FILE)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise SeedError(f"{path}: cannot read the class seed ({e}); pass --new-seed to draw another "
                        f"(every submission is then graded again)")
    seed = data.get("seed") if isinstance(data, dict) else None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise SeedError(f"{path}: no valid \"seed\" in it; pass --new-seed to draw another")
    return seed


def store(results_dir, seed):
    """Writes seed.json atomically. Shards of one class (--shard, --slurm) share results_dir and
    each stores the seed at its start: each writes a temporary file of its own (one shared name
    let a shard's rename find it gone)."""
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"seed": seed, "stored_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}, f)
        f.write("\n")
    os.replace(tmp, path)


def class_seed(results_dir, given=None, new=False, draw=None):
    """(the seed of this batch, how it was chosen: 'given', 'stored', 'new'), stored in
    results_dir: --seed (given) wins, then the stored seed unless new, else a fresh one."""
    draw = draw or (lambda: int.from_bytes(os.urandom(4), "little"))
    if given is not None:
        store(results_dir, given)
        return given, "given"
    if not new:
        seed = stored(results_dir)
        if seed is not None:
            return seed, "stored"
    seed = draw()
    store(results_dir, seed)
    return seed, "new"


def describe(seed, how, results_dir):
    """The log line of the class seed."""
    where = os.path.join(results_dir, FILE)
    if how == "stored":
        return (f"seed {seed}: the class seed stored in {where} "
                "(resumes and --only regrades reuse it; --new-seed draws another)")
    return f"seed {seed} ({'from --seed' if how == 'given' else 'new'}), stored in {where} as the class seed"


def only(subs, names):
    """(the submissions of subs named in names, the names that match none)."""
    wanted = set(names)
    chosen = [(s, p) for s, p in subs if s in wanted]
    return chosen, sorted(wanted - {s for s, _ in chosen})
