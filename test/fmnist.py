#!/usr/bin/env python3
"""fmnist.py: print Fashion-MNIST images as COPY text for a real[] column.

Usage: python3 test/fmnist.py {train|test} [N]

Prints the first N images (all of them when N is left out: 60,000 in train,
10,000 in test) of the chosen set, one line each: id, a tab, and the 784
pixel values (0..255, row-major) in real[] text form, as in
"1<TAB>{0,0,13,...}".  Ids count from 1.  Feed it to
"COPY t (id, embedding) FROM STDIN".

Reads Debian's dataset-fashion-mnist files from /usr/share/datasets/
fashion-mnist (FMNIST_DIR overrides).  Standard library only.
"""

import gzip
import os
import struct
import sys

DATA_DIR = os.environ.get("FMNIST_DIR", "/usr/share/datasets/fashion-mnist")
FILES = {
    "train": "train-images-idx3-ubyte.gz",
    "test": "t10k-images-idx3-ubyte.gz",
}
IDX3_MAGIC = 0x00000803  # unsigned byte data, 3 dimensions


def usage(msg):
    sys.stderr.write("fmnist.py: %s\nusage: fmnist.py {train|test} [N]\n" % msg)
    sys.exit(2)


def main(argv):
    if len(argv) not in (2, 3) or argv[1] not in FILES:
        usage("bad arguments")
    limit = None
    if len(argv) == 3:
        try:
            limit = int(argv[2])
        except ValueError:
            usage("N must be an integer")
        if limit < 0:
            usage("N must not be negative")

    path = os.path.join(DATA_DIR, FILES[argv[1]])
    with gzip.open(path, "rb") as f:
        header = f.read(16)
        if len(header) != 16:
            sys.exit("fmnist.py: %s: truncated header" % path)
        magic, count, rows, cols = struct.unpack(">IIII", header)
        if magic != IDX3_MAGIC:
            sys.exit("fmnist.py: %s: bad magic 0x%08x" % (path, magic))
        if limit is None:
            limit = count
        elif limit > count:
            sys.exit("fmnist.py: %s holds %d images, %d asked"
                     % (path, count, limit))

        dim = rows * cols
        text = [str(v) for v in range(256)]
        lookup = text.__getitem__
        out = sys.stdout
        for i in range(1, limit + 1):
            pixels = f.read(dim)
            if len(pixels) != dim:
                sys.exit("fmnist.py: %s: truncated at image %d" % (path, i))
            out.write("%d\t{%s}\n" % (i, ",".join(map(lookup, pixels))))


if __name__ == "__main__":
    try:
        main(sys.argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (e.g. "| head"): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)
