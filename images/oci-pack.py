#!/usr/bin/env python3
"""Packs a root folder as a one-layer linux/riscv64 OCI image archive, byte for byte the
same for the same folder and config: the layer is a tar with entries sorted by name, owned
as they are on disk (numeric ids, no names), every time fixed, gzip'd without a name or a
time; the config's `created` is fixed too. For example images built from Debian's riscv64
packages in this repository, without a registry or a container engine.

Usage: images/oci-pack.py ROOT OUT.tar NAME CONFIG.json
  CONFIG.json: the image config's `config` object (Entrypoint, Cmd, Env, WorkingDir, User).
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

EPOCH = 1735689600  # 2025-01-01, as every artifact of images/


def layer_tar(root):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        paths = []
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for n in sorted(dirs + files):
                paths.append(os.path.join(d, n))
        for p in sorted(paths, key=lambda p: os.path.relpath(p, root)):
            info = t.gettarinfo(p, arcname=os.path.relpath(p, root))
            info.mtime = EPOCH
            info.uname = info.gname = ""
            if info.isreg():
                with open(p, "rb") as f:
                    t.addfile(info, f)
            else:
                t.addfile(info)
    return buf.getvalue()


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    root, out, name, config_path = sys.argv[1:]
    with open(config_path) as f:
        run = json.load(f)
    plain = layer_tar(root)
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0, filename="") as g:
        g.write(plain)
    layer = gz.getvalue()
    sha = lambda b: "sha256:" + hashlib.sha256(b).hexdigest()
    config = json.dumps({
        "created": "2025-01-01T00:00:00Z", "architecture": "riscv64", "os": "linux",
        "config": run, "rootfs": {"type": "layers", "diff_ids": [sha(plain)]},
    }, sort_keys=True).encode()
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": sha(config), "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": sha(layer), "size": len(layer)}],
    }, sort_keys=True).encode()
    index = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(manifest),
                       "size": len(manifest), "platform": {"architecture": "riscv64", "os": "linux"},
                       "annotations": {"org.opencontainers.image.ref.name": name}}],
    }, sort_keys=True).encode()
    members = [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", index)]
    members += [("blobs/sha256/" + sha(b)[7:], b) for b in (config, manifest, layer)]
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        for d in ("blobs", "blobs/sha256"):
            info = tarfile.TarInfo(d)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, EPOCH
            t.addfile(info)
        for n, b in members:
            info = tarfile.TarInfo(n)
            info.size, info.mode, info.mtime = len(b), 0o644, EPOCH
            t.addfile(info, io.BytesIO(b))
    print(sha(config))


if __name__ == "__main__":
    main()
