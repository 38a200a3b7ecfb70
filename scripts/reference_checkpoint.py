#!/usr/bin/python3
"""A reference checkpoint (lessons/checkpoints/) from a lesson's run: its model card and its
weights, the optimizer's state left out ("optim/" arrays: the checkpoint is for running the model,
not for training on) and the arrays deflated. numpy and attnlab's load_npz read both.

  scripts/reference_checkpoint.py RUN_DIR STEM DEST_DIR
  e.g. scripts/reference_checkpoint.py /tmp/gpt_run gpt lessons/checkpoints/11_gpt

copies RUN_DIR/STEM.json and RUN_DIR/STEM.npz into DEST_DIR (each written under a temporary
name and renamed), refusing a card of a --quick run.
"""
import json
import os
import sys
import tempfile
import zipfile


def atomic_write(path, write):
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-" + os.path.basename(path))
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would keep the file from others
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(run, stem, dest):
    card_path = os.path.join(run, stem + ".json")
    with open(card_path, encoding="utf-8") as f:
        card = json.load(f)
    if card.get("quick"):
        sys.exit(f"reference_checkpoint: '{card_path}' is from a --quick run; a reference is a full run")
    os.makedirs(dest, exist_ok=True)

    def copy_card(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(card, indent=1, ensure_ascii=False) + "\n")

    def copy_weights(tmp):
        kept = dropped = 0
        with zipfile.ZipFile(os.path.join(run, stem + ".npz")) as src, \
             zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as out:
            for item in src.infolist():
                if item.filename.startswith("optim/"):
                    dropped += 1
                    continue
                out.writestr(item.filename, src.read(item.filename))
                kept += 1
        print(f"{stem}.npz: {kept} arrays kept, {dropped} of the optimizer's left out")

    atomic_write(os.path.join(dest, stem + ".json"), copy_card)
    atomic_write(os.path.join(dest, stem + ".npz"), copy_weights)
    size = sum(os.path.getsize(os.path.join(dest, stem + ext)) for ext in (".json", ".npz"))
    print(f"{dest}: {size / 1e6:.2f} MB")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        print("usage: scripts/reference_checkpoint.py RUN_DIR STEM DEST_DIR", file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
