#!/usr/bin/python3
"""Writes the seed corpora of the fuzz harnesses: a few small valid files per reader, as numpy and
gzip write them, so that the fuzzer starts inside each format rather than guessing its magic.
The output is checked in (fuzz/corpus/<reader>/); run again only to change the seeds:

    /usr/bin/python3 fuzz/make_corpus.py   (numpy from python3-numpy)
"""
import gzip
import io
import os
import struct

import numpy as np

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(reader, name, data):
    os.makedirs(os.path.join(root, reader), exist_ok=True)
    with open(os.path.join(root, reader, name), "wb") as f:
        f.write(data)


def npy(array, version=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array), version=version, allow_pickle=False)
    return buf.getvalue()


def npz(compressed=False, **arrays):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


# .npy: each dtype, 0-d and empty shapes, Fortran order, header versions 2.0 and 3.0.
put("npy", "f4_2x3.npy", npy(np.arange(6, dtype="<f4").reshape(2, 3)))
put("npy", "f8_scalar.npy", npy(np.float64(2.5)))
put("npy", "i8_4.npy", npy(np.array([-2, 0, 7, 1 << 40], dtype="<i8")))
put("npy", "b1_2x2.npy", npy(np.array([[True, False], [False, True]])))
put("npy", "f8_fortran.npy", npy(np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3))))
put("npy", "f4_empty.npy", npy(np.zeros((0, 3), dtype="<f4")))
put("npy", "v2.npy", npy(np.ones((2, 1, 2), dtype="<f4"), version=(2, 0)))
put("npy", "v3.npy", npy(np.arange(3, dtype="<i8"), version=(3, 0)))

# .npz: stored and deflated members (numpy writes ZIP64 extra fields), an empty archive.
mixed = dict(a=np.arange(6, dtype="<f4").reshape(2, 3), s=np.float64(1.5), m=np.array([True, False]),
             i=np.array([[1, -2], [3, 4]], dtype="<i8"))
put("npz", "stored.npz", npz(**mixed))
put("npz", "deflated.npz", npz(compressed=True, **mixed))
put("npz", "empty.npz", npz())

# IDX: gzip-compressed labels (2049) and images (2051), a raw (uncompressed) file, two gzip
# members, and a 4-dimensional file (2052).
def idx(magic, dims, payload):
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + bytes(payload)


def gz(data):
    return gzip.compress(data, mtime=0)  # mtime 0: the same bytes on every run


labels = idx(2049, [5], [9, 0, 0, 3, 1])
images = idx(2051, [2, 4, 4], range(32))
put("idx", "labels.gz", gz(labels))
put("idx", "images.gz", gz(images))
put("idx", "images_raw", images)
put("idx", "two_members.gz", gz(images[:20]) + gz(images[20:]))
put("idx", "four_dims.gz", gz(idx(2052, [1, 2, 2, 2], range(8))))

# Checkpoints for the harness's Linear(3, 2) with Adam: the keys attnlab's save_checkpoint writes,
# in the harness's plain container (fuzz/checkpoint.cpp): key, '\0', 4-byte length, .npy bytes.
def records(arrays):
    return b"".join(k.encode() + b"\0" + struct.pack("<I", len(npy(v))) + npy(v) for k, v in arrays.items())


rng = np.random.default_rng(7)
weights = dict(weight=rng.normal(size=(2, 3)).astype("<f4"), bias=rng.normal(size=2).astype("<f4"))
adam = {"optim/lr": np.float64(1e-3), "optim/step": np.int64(3)}
for name, shape in [("weight", (2, 3)), ("bias", (2,))]:  # state keyed by parameter name
    adam["optim/exp_avg/" + name] = rng.normal(size=shape).astype("<f4")
    adam["optim/exp_avg_sq/" + name] = rng.random(size=shape).astype("<f4")
    adam["optim/step/" + name] = np.int64(3)
put("checkpoint", "linear_adam", records({**weights, **adam}))
put("checkpoint", "linear_weights", records(weights))
put("checkpoint", "linear_adam_f8", records({k: (v.astype("<f8") if v.dtype == np.float32 else v)
                                            for k, v in {**weights, **adam}.items()}))

# Topic files of the fortunes reader: '%'-separated entries as strfile(1) writes them, with what
# the reader cleans (overstrike, a bell, trailing blanks, empty entries, Latin-1 bytes).
put("fortunes", "plain", b"A day without sunshine is like night.\n%\nTwo lines,\n\tindented.\n"
                         b"\t\t-- Anonymous\n%\n")
put("fortunes", "overstrike", b"_\bb_\bo_\bl_\bd and B\bBo\bol\bld\bd\n%\n*___\b\b\band*\n%\n")
put("fortunes", "messy", b"%\n%\n\n  trailing blanks   \n\x07bell\r\n\n%\n%\ncaf\xe9 na\xefve\n%")
put("fortunes", "utf8", "Zürich – “quoted” ☃\n%\n".encode())

# Grey maps of the PGM reader: binary 8 and 16 bits with a comment, plain text with comments.
put("pgm", "p5_3x2.pgm", b"P5\n# a comment\n3 2\n255\n\x00\x80\xff\x01\x02\x03")
put("pgm", "p2_2x2.pgm", b"P2 2 2 # w h\n 10\n0 5\n10 2\n")
put("pgm", "p5_16bit.pgm", b"P5 2 1 65535 \x80\x00\xff\xff")
