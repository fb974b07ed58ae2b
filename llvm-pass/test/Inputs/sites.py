"""Checks on prlx-sites.json files for the lit tests.

  sites.py check-unique FILE      every site_id appears once
  sites.py count FILE             prints "<n> sites"
  sites.py collisions FILE        prints "<n> rehashed" (sites with rehash > 0)
  sites.py same-except-line A B LINE
      the (site_id, line, column, kind) sets of A and B agree on every line
      but LINE, and differ on LINE
  sites.py same-ids A B           the same (site_id, function, line, column,
      kind, ordinal) sites, whatever their file paths
"""
import json
import sys


def load(path):
    with open(path) as f:
        sites = json.load(f)
    if not isinstance(sites, list):
        sys.exit(f"{path}: not a JSON array")
    return sites


def main(argv):
    cmd = argv[1]
    if cmd == "check-unique":
        sites = load(argv[2])
        ids = [s["site_id"] for s in sites]
        dup = {i for i in ids if ids.count(i) > 1}
        if dup:
            sys.exit(f"duplicate site ids: {sorted(dup)}")
        if not all(0 <= i < 2**32 for i in ids):
            sys.exit("site id out of u32 range")
    elif cmd == "count":
        print(f"{len(load(argv[2]))} sites")
    elif cmd == "collisions":
        print(f"{sum(1 for s in load(argv[2]) if s.get('rehash', 0) > 0)} rehashed")
    elif cmd == "same-except-line":
        line = int(argv[4])
        def by_line(path):
            out = {}
            for s in load(path):
                out.setdefault(s["line"], set()).add(
                    (s["site_id"], s["column"], s["event_type"], s["ordinal"]))
            return out
        a, b = by_line(argv[2]), by_line(argv[3])
        for ln in sorted(set(a) | set(b)):
            same = a.get(ln) == b.get(ln)
            if ln == line and same:
                sys.exit(f"line {ln}: ids unchanged by the edit: {a.get(ln)}")
            if ln != line and not same:
                sys.exit(f"line {ln}: ids changed: {a.get(ln)} -> {b.get(ln)}")
        if line not in a or line not in b:
            sys.exit(f"line {line} has no sites in one of the builds")
        print(f"only line {line} changed; {sum(len(v) for v in a.values())} sites")
    elif cmd == "same-ids":
        def ids(path):
            return sorted((s["site_id"], s["function"], s["line"], s["column"],
                           s["event_type"], s["ordinal"]) for s in load(path))
        a, b = ids(argv[2]), ids(argv[3])
        if a != b:
            sys.exit(f"site ids differ: {sorted(set(a) ^ set(b))[:4]}")
        print(f"same ids: {len(a)} sites")
    elif cmd == "same":
        a, b = load(argv[2]), load(argv[3])
        if a != b:
            sys.exit("site tables differ")
        print(f"identical: {len(a)} sites")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
