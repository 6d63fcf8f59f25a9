//! End-to-end tests of `wio image import` and `wio image list` (no KVM, no guests): OCI
//! layouts and archives built here, byte for byte (`support/oci.rs`), then imported; the
//! disks read back with debugfs; bad images refused with one line and nothing left in the
//! cache.

#![forbid(unsafe_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use wio_e2e_tests::oci::{
    debugfs, import_json, layer, sha, tar_file, wio_in, zstd, Layout, E, GZIP,
};
use wio_e2e_tests::{scratch, stderr};

/// The test image: a riscv64 image of two layers (with a whiteout, an opaque directory, a
/// symlinked parent, a hard link, a device, a fifo, a setuid file, a capability, a
/// non-root user) and an amd64 image beside it in one index.
fn test_image(dir: &Path) -> Layout {
    let l = Layout::new(dir);
    let base = layer(&[
        E::Dir("bin", 0o755),
        E::File("bin/hello", b"#!/bin/sh\necho hello\n", 0o4755, 0),
        E::Hardlink("bin/hello-again", "bin/hello"),
        E::Dir("usr/lib", 0o755),
        E::Symlink("lib", "usr/lib"),
        E::File(
            "etc/passwd",
            b"root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n",
            0o644,
            0,
        ),
        E::File("etc/motd", b"old\n", 0o644, 0),
        E::File("tmp/gone.txt", b"deleted by the next layer\n", 0o644, 0),
        E::File(
            "var/cache/apt/old.bin",
            b"emptied by the next layer\n",
            0o644,
            0,
        ),
        E::File("home/app/data", b"the app's\n", 0o600, 1000),
        E::Char("dev/null", 1, 3),
        E::Fifo("run/pipe"),
        E::Xattr(
            "bin/ping",
            b"ELF?",
            "security.capability",
            b"\x01\x00\x00\x02\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
        ),
    ]);
    let top = layer(&[
        E::File("tmp/.wh.gone.txt", b"", 0o644, 0),
        E::Dir("var/cache/apt", 0o755),
        E::File("var/cache/apt/.wh..wh..opq", b"", 0o644, 0),
        E::File("var/cache/apt/new.bin", b"kept\n", 0o644, 0),
        E::File("lib/via-link.so", b"through the symlink\n", 0o644, 0),
        E::File("etc/motd", b"new\n", 0o644, 0),
        E::File(
            "home/app/file with \"quotes\" and spaces",
            b"odd name\n",
            0o644,
            1000,
        ),
    ]);
    let config = json!({
        "User": "1000:1000", "Env": ["PATH=/usr/bin:/bin", "GREETING=hi"], "WorkingDir": "/home/app",
        "Entrypoint": ["/bin/hello"], "Cmd": ["--loud"], "ExposedPorts": {"8080/tcp": {}},
    });
    let riscv = l.image("riscv64", &[base, top], config, GZIP);
    let amd = l.one_file_image("amd64", "etc/arch", b"amd64\n");
    l.index("localhost/wio-test:1", vec![amd, riscv]);
    l
}

#[test]
fn an_oci_archive_becomes_the_same_disk_every_time_with_every_layer_applied() {
    let dir = scratch("images-archive");
    let layout = test_image(&dir.join("layout"));
    let archive = dir.join("image.tar");
    layout.archive(&archive);
    let first = import_json(&dir.join("cache-a"), &archive);
    assert_eq!(first["cached"], false);
    let r = &first["record"];
    assert_eq!(r["references"], json!(["localhost/wio-test:1"]));
    assert_eq!(r["platform"], "linux/riscv64");
    assert_eq!(
        r["platforms_offered"],
        json!(["linux/amd64", "linux/riscv64"])
    );
    assert_eq!(r["config"]["user"], "1000:1000");
    assert_eq!(r["config"]["working_dir"], "/home/app");
    assert_eq!(r["config"]["entrypoint"], json!(["/bin/hello"]));
    assert_eq!(r["config"]["cmd"], json!(["--loud"]));
    assert_eq!(
        r["config"]["env"],
        json!(["PATH=/usr/bin:/bin", "GREETING=hi"])
    );
    assert_eq!(r["config"]["exposed_ports"], json!(["8080/tcp"]));
    let disk = PathBuf::from(first["disk"].as_str().expect("disk path"));
    // Again into the same cache: found, not rebuilt.
    let again = import_json(&dir.join("cache-a"), &archive);
    assert_eq!(again["cached"], true);
    assert_eq!(again["disk"], first["disk"]);
    // The layout directory, into another cache, at another second: the same bytes.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let other = import_json(&dir.join("cache-b"), &layout.dir);
    assert_eq!(other["cached"], false);
    let bytes = |p: &Path| sha(&std::fs::read(p).expect("disk"));
    assert_eq!(
        bytes(&disk),
        bytes(Path::new(other["disk"].as_str().expect("disk")))
    );
    let fsck = std::process::Command::new("e2fsck")
        .args(["-f", "-n"])
        .arg(&disk)
        .output()
        .expect("e2fsck");
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stdout)
    );

    // What the layers made.
    let hello = debugfs(&disk, "stat /bin/hello");
    assert!(hello.contains("Mode:  04755"), "{hello}");
    assert!(
        hello.contains("Links: 2"),
        "a hard link shares the inode: {hello}"
    );
    let data = debugfs(&disk, "stat /home/app/data");
    assert!(data.contains("User:  1000   Group:  1000"), "{data}");
    assert!(data.contains("Mode:  0600"), "{data}");
    assert!(debugfs(&disk, "stat /lib").contains("Fast link dest: \"usr/lib\""));
    assert!(debugfs(&disk, "cat /usr/lib/via-link.so").contains("through the symlink"));
    assert_eq!(debugfs(&disk, "cat /etc/motd"), "new\n");
    assert!(debugfs(&disk, "stat /dev/null").contains("Device major/minor number: 01:03"));
    assert!(debugfs(&disk, "stat /run/pipe").contains("Type: FIFO"));
    assert!(debugfs(&disk, "ea_list /bin/ping").contains("security.capability"));
    assert!(debugfs(
        &disk,
        "cat \"/home/app/file with \"\"quotes\"\" and spaces\""
    )
    .contains("odd name"));
    let tmp = debugfs(&disk, "ls /tmp");
    assert!(!tmp.contains("gone.txt"), "the whiteout removed it: {tmp}");
    let apt = debugfs(&disk, "ls /var/cache/apt");
    assert!(
        apt.contains("new.bin") && !apt.contains("old.bin") && !apt.contains(".wh."),
        "{apt}"
    );
    assert!(
        !debugfs(&disk, "ls /etc").contains("arch"),
        "nothing of the amd64 image"
    );
    // Every inode has the layer's time, not the import's.
    assert!(data.contains("mtime: 0x6553f100"), "{data}");

    // wio image list shows it, and --json gives the disk.
    let list = wio_in(&dir.join("cache-a"), &["image", "list"]);
    assert!(String::from_utf8_lossy(&list.stdout).contains("localhost/wio-test:1"));
    let list = wio_in(&dir.join("cache-a"), &["image", "list", "--json"]);
    let v: Value = serde_json::from_slice(&list.stdout).expect("list --json");
    assert_eq!(v[0]["disk"], first["disk"]);
}

/// Runs an import that must fail: exit `code`, one `wio: error:` line naming `needle` and
/// the image, and nothing left in the cache (no image, no scratch folder).
fn refused(dir: &Path, image: &Path, code: i32, needle: &str) {
    let cache = dir.join("cache");
    let o = wio_in(&cache, &["image", "import", image.to_str().expect("utf-8")]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("wio: error:"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(needle), "{needle:?} in {err}");
    assert!(
        lines[0].contains(image.to_str().expect("utf-8")),
        "names the image: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let left: Vec<PathBuf> = ["images", "tmp"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(cache.join(d))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
        })
        .collect();
    assert!(left.is_empty(), "nothing written to the cache: {left:?}");
}

#[test]
fn bad_images_are_refused_in_one_line_and_leave_nothing_behind() {
    let dir = scratch("images-bad");
    let fresh = |name: &str| {
        let l = test_image(&dir.join(name));
        let index: Value =
            serde_json::from_slice(&std::fs::read(l.dir.join("index.json")).expect("index"))
                .expect("json");
        (l, index)
    };
    // The riscv64 manifest's layers, found through the nested index.
    let layers_of = |l: &Layout, index: &Value| -> Vec<String> {
        let inner: Value = serde_json::from_slice(
            &std::fs::read(l.blob_path(index["manifests"][0]["digest"].as_str().expect("d")))
                .expect("inner"),
        )
        .expect("json");
        let m: Value = serde_json::from_slice(
            &std::fs::read(l.blob_path(inner["manifests"][1]["digest"].as_str().expect("d")))
                .expect("m"),
        )
        .expect("json");
        m["layers"]
            .as_array()
            .expect("layers")
            .iter()
            .map(|d| d["digest"].as_str().expect("d").to_string())
            .collect()
    };

    // A missing layer blob.
    let (l, index) = fresh("missing");
    std::fs::remove_file(l.blob_path(&layers_of(&l, &index)[1])).expect("remove");
    refused(&dir.join("c1"), &l.dir, 101, "is missing");

    // A layer whose bytes changed under its digest.
    let (l, index) = fresh("mismatch");
    let p = l.blob_path(&layers_of(&l, &index)[0]);
    let mut b = std::fs::read(&p).expect("blob");
    let mid = b.len() / 2;
    b[mid] ^= 0xff;
    std::fs::write(&p, b).expect("write");
    refused(&dir.join("c2"), &l.dir, 101, "does not match its digest");

    // A corrupt layer: garbage that is not gzip, under a digest that matches it (so only
    // reading the layer finds it).
    let l = Layout::new(&dir.join("corrupt"));
    let garbage = b"this is not a gzip stream at all, just bytes".repeat(20);
    let config = json!({"architecture": "riscv64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": [sha(b"x")]}});
    let cbytes = serde_json::to_vec(&config).expect("json");
    let manifest = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": l.blob(&cbytes), "size": cbytes.len()},
        "layers": [{"mediaType": GZIP, "digest": l.blob(&garbage), "size": garbage.len()}]});
    let mbytes = serde_json::to_vec(&manifest).expect("json");
    let top = json!({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": l.blob(&mbytes), "size": mbytes.len(), "platform": {"architecture": "riscv64", "os": "linux"}}]});
    std::fs::write(
        l.dir.join("index.json"),
        serde_json::to_vec(&top).expect("json"),
    )
    .expect("index");
    refused(&dir.join("c3"), &l.dir, 101, "damaged");

    // An image with no riscv64 platform: the message lists what there is.
    let l = Layout::new(&dir.join("amd64-only"));
    let amd = l.one_file_image("amd64", "a", b"a");
    let arm = l.one_file_image("arm64", "a", b"b");
    l.index("x:1", vec![amd, arm]);
    refused(
        &dir.join("c4"),
        &l.dir,
        101,
        "no linux/riscv64 image in it (it holds linux/amd64, linux/arm64)",
    );

    // A layer compressed in a way wio does not read: said plainly.
    let l = Layout::new(&dir.join("bzip2"));
    let z = l.image(
        "riscv64",
        &[layer(&[E::File("a", b"a", 0o644, 0)])],
        json!({}),
        "application/vnd.oci.image.layer.v1.tar+bzip2",
    );
    l.index("z:1", vec![z]);
    refused(
        &dir.join("c5"),
        &l.dir,
        101,
        "tar+bzip2, which wio cannot read yet (it reads tar, tar+gzip and tar+zstd)",
    );

    // Not an image at all, and a path that does not exist.
    let junk = dir.join("junk.tar");
    std::fs::write(&junk, b"hello").expect("junk");
    refused(&dir.join("c6"), &junk, 101, "not a tar archive");
    refused(
        &dir.join("c7"),
        &dir.join("nowhere.tar"),
        101,
        "cannot read",
    );
}

/// zstd layers (podman's `--compression-format zstd` and `zstd:chunked`: several frames and
/// a skippable one) import as their gzip twins do: the same files, and a corrupted zstd
/// layer is refused in one line.
#[test]
fn zstd_layers_import_like_gzip_ones() {
    let dir = scratch("images-zstd");
    let files = layer(&[
        E::Dir("etc", 0o755),
        E::File("etc/motd", b"from a zstd layer\n", 0o644, 0),
        E::File("bin/tool", &[7u8; 70_000], 0o755, 0),
    ]);
    let top = layer(&[
        E::File("etc/.wh.motd", b"", 0o644, 0),
        E::File("etc/issue", b"top\n", 0o644, 0),
    ]);
    let import = |name: &str, media: &str| {
        let l = Layout::new(&dir.join(name));
        let img = l.image("riscv64", &[files.clone(), top.clone()], json!({}), media);
        l.index("z:1", vec![img]);
        let v = import_json(&dir.join(format!("cache-{name}")), &l.dir);
        PathBuf::from(v["disk"].as_str().expect("disk"))
    };
    let zstd_disk = import("zstd", "application/vnd.oci.image.layer.v1.tar+zstd");
    let gzip = import("gzip", GZIP);
    assert_eq!(debugfs(&zstd_disk, "cat /etc/issue"), "top\n");
    let etc = debugfs(&zstd_disk, "ls /etc");
    assert!(
        etc.contains("issue") && !etc.contains("motd"),
        "whited out: {etc}"
    );
    assert_eq!(debugfs(&zstd_disk, "cat /bin/tool").len(), 70_000);
    // The same image but for its layers' compression: the same files.
    for path in ["/etc/issue", "/bin/tool"] {
        assert_eq!(
            debugfs(&zstd_disk, &format!("cat {path}")),
            debugfs(&gzip, &format!("cat {path}"))
        );
    }
    // An image of one zstd layer stored as `stored`, with `annotations`, whose config
    // says its tar is `files`.
    let manual = |name: &str, stored: &[u8], annotations: Value| {
        let l = Layout::new(&dir.join(name));
        let d = json!({"mediaType": "application/vnd.oci.image.layer.v1.tar+zstd",
            "digest": l.blob(stored), "size": stored.len(), "annotations": annotations});
        let config = json!({"architecture": "riscv64", "os": "linux",
            "rootfs": {"type": "layers", "diff_ids": [sha(&files)]}});
        let cbytes = serde_json::to_vec(&config).expect("json");
        let manifest = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": l.blob(&cbytes), "size": cbytes.len()},
            "layers": [d]});
        let mbytes = serde_json::to_vec(&manifest).expect("json");
        let m = json!({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": l.blob(&mbytes),
            "size": mbytes.len(), "platform": {"architecture": "riscv64", "os": "linux"}});
        l.index("z:1", vec![m]);
        l.dir
    };
    // A corrupted zstd layer whose digests match (the blob rewritten, the digests
    // recomputed): the decoder's error, one line.
    let bogus = manual("bad", b"\x28\xb5\x2f\xfdnot really zstd", json!({}));
    refused(&dir.join("c"), &bogus, 101, "zstd");
    // zstd:chunked holds another tar than the image's (containers/storage rebuilds the
    // image's from its tar-split metadata): said so, with what to do.
    let other = zstd(&top);
    let chunked = manual(
        "chunked",
        &other,
        json!({"io.containers.zstd-chunked.manifest-checksum": "sha256:00"}),
    );
    refused(
        &dir.join("c2"),
        &chunked,
        101,
        "is zstd:chunked, whose frames hold another tar",
    );
}

#[test]
fn docker_save_archives_import_and_several_images_need_a_ref() {
    let dir = scratch("images-docker");
    // docker save's own format: manifest.json naming a config and uncompressed layer tars.
    let l1 = layer(&[E::File("etc/hostname", b"docker\n", 0o644, 0)]);
    let config = json!({"architecture": "riscv64", "os": "linux", "config": {"Cmd": ["sh"]},
        "rootfs": {"type": "layers", "diff_ids": [sha(&l1)]}});
    let cbytes = serde_json::to_vec(&config).expect("json");
    let cname = format!("{}.json", sha(&cbytes).trim_start_matches("sha256:"));
    let manifest = json!([{"Config": cname, "RepoTags": ["app:1"], "Layers": ["abc/layer.tar"]}]);
    let archive = dir.join("docker.tar");
    tar_file(
        &archive,
        &[
            (
                "manifest.json",
                serde_json::to_vec(&manifest).expect("json"),
            ),
            (cname.as_str(), cbytes),
            ("abc/layer.tar", l1),
        ],
    );
    let v = import_json(&dir.join("cache"), &archive);
    assert_eq!(v["record"]["references"], json!(["app:1"]));
    assert_eq!(v["record"]["config"]["cmd"], json!(["sh"]));
    assert!(v["record"]["manifest"].is_null());
    let disk = PathBuf::from(v["disk"].as_str().expect("disk"));
    assert_eq!(debugfs(&disk, "cat /etc/hostname"), "docker\n");

    // A layout holding two images: --ref chooses, without it the error names both.
    let l = Layout::new(&dir.join("two"));
    let a = l.one_file_image("riscv64", "which", b"a\n");
    let b2 = l.one_file_image("riscv64", "which", b"b\n");
    let named = |mut d: Value, n: &str| {
        d["annotations"] = json!({"org.opencontainers.image.ref.name": n});
        d
    };
    let top = json!({"schemaVersion": 2, "manifests": [named(a, "docker.io/library/alpha:latest"), named(b2, "beta:2")]});
    std::fs::write(
        l.dir.join("index.json"),
        serde_json::to_vec(&top).expect("json"),
    )
    .expect("index");
    let cache = dir.join("cache2");
    let o = wio_in(&cache, &["image", "import", l.dir.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "holds 2 images (docker.io/library/alpha:latest, beta:2); choose one with --ref NAME"
        ),
        "{}",
        stderr(&o)
    );
    let o = wio_in(
        &cache,
        &[
            "image",
            "import",
            l.dir.to_str().expect("utf-8"),
            "--ref",
            "alpha",
            "--name",
            "first",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        v["record"]["references"],
        json!(["docker.io/library/alpha:latest", "first"])
    );
    assert_eq!(
        debugfs(Path::new(v["disk"].as_str().expect("disk")), "cat /which"),
        "a\n"
    );
    // Too small a --size is refused before anything is written.
    let o = wio_in(
        &cache,
        &[
            "image",
            "import",
            l.dir.to_str().expect("utf-8"),
            "--ref",
            "beta:2",
            "--size",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot hold this image"),
        "{}",
        stderr(&o)
    );
}
