#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
longfiles.py -- no source file of the daemon, the tiers, tierctl or the
Slurm plugin grows past LIMIT lines without saying why at its top (issue 20): a file that
long must carry "Longer than 700 lines for a reason:" in its opening
comment, followed by the reason.

  tests/longfiles.py DIR...    (default: fs fs/util tiers tools contrib/slurm)

Exit status: 0, or 1 listing each file over the limit without a reason.
"""
import os
import sys

LIMIT = 750  # "about 700": a file may pass 700 by a screen before it must
MARK = 'Longer than 700 lines for a reason:'


def opening_comment(text):
    start = text.find('/*')
    end = text.find('*/', start)
    return text[start:end] if start >= 0 and end > start else ''


def main(argv):
    dirs = argv or ['fs', 'fs/util', 'tiers', 'tools', 'contrib/slurm']
    bad = []
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(d, name)
            with open(path, encoding='utf-8', errors='replace') as f:
                text = f.read()
            n = text.count('\n')
            if n > LIMIT and MARK not in opening_comment(text):
                bad.append(f'{path}: {n} lines and no "{MARK}" at its top')
    for b in bad:
        print(b)
    if not bad:
        print(f'no file over {LIMIT} lines without a reason')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
