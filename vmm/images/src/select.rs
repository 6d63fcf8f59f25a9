//! Which image of a source wio imports: the top-level image (one, or the one `--ref`
//! names), its linux/riscv64 manifest (from a multi-platform index, nested indexes
//! followed), that manifest's config and layers, each checked against its digest.

use crate::error::{ImageError, Result};
use crate::source::{Sha256Digest, Source};
use oci_spec::image::{Descriptor, ImageConfiguration, ImageIndex, ImageManifest};

/// The platform wio's machines run.
pub const PLATFORM: &str = "linux/riscv64";

/// How deep image indexes may nest (an index of indexes of manifests is already unusual).
const MAX_INDEX_DEPTH: usize = 4;

/// How a layer's bytes are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// A plain tar.
    None,
    /// tar+gzip.
    Gzip,
    /// tar+zstd (podman's `zstd` and `zstd:chunked`).
    Zstd,
    /// Not said (docker's archive format): told by the first bytes.
    Sniff,
}

/// One layer to apply, lowest first.
#[derive(Clone, Debug)]
pub struct Layer {
    /// The member of the source holding it.
    pub member: String,
    /// The digest of its stored bytes (None in docker archives, which name layers by path).
    pub digest: Option<Sha256Digest>,
    /// Its stored size, when the manifest says.
    pub size: Option<u64>,
    /// Its compression.
    pub compression: Compression,
    /// A zstd:chunked layer (podman's; its annotation says so): its frames hold a tar that
    /// differs from the image's own, rebuilt by containers/storage from metadata wio does
    /// not read.
    pub chunked: bool,
    /// The digest of its uncompressed tar (the config's `rootfs.diff_ids`).
    pub diff_id: Sha256Digest,
}

impl Layer {
    /// How messages name the layer.
    pub fn name(&self) -> String {
        match &self.digest {
            Some(d) => d.to_string(),
            None => self.member.clone(),
        }
    }
}

/// The image chosen for import.
pub struct Chosen {
    /// Its name in the source (an index annotation or docker's RepoTags), if it has one.
    pub reference: Option<String>,
    /// The manifest's digest (None for docker archives, which keep no manifest blob).
    pub manifest: Option<Sha256Digest>,
    /// The config's digest: the image's ID. The disk is a function of it alone (its
    /// diff_ids fix every layer's uncompressed bytes), so the cache is keyed by it.
    pub config_digest: Sha256Digest,
    /// The parsed config.
    pub config: ImageConfiguration,
    /// The layers, lowest first.
    pub layers: Vec<Layer>,
    /// Every platform the source offered (for the record).
    pub platforms: Vec<String>,
}

/// Chooses the linux/riscv64 image of a source; `want` is `--ref`.
pub fn choose(src: &Source, want: Option<&str>) -> Result<Chosen> {
    if let Some(index) = src.small_member("index.json", "index")? {
        if src.member("oci-layout")?.is_some() {
            return choose_oci(src, &index, want);
        }
    }
    if let Some(manifest) = src.small_member("manifest.json", "manifest.json")? {
        return choose_docker(src, &manifest, want);
    }
    Err(ImageError::NotAnImage {
        path: src.path.clone(),
        why: "no index.json with oci-layout (OCI) and no manifest.json (docker save)".into(),
    })
}

/// A manifest found under the top-level image, with its platform if the index says.
struct Candidate {
    manifest: Descriptor,
    platform: Option<String>,
}

fn platform_name(d: &Descriptor) -> Option<String> {
    d.platform().as_ref().map(|p| {
        let mut s = format!("{}/{}", p.os(), p.architecture());
        if let Some(v) = p.variant() {
            s.push('/');
            s.push_str(v);
        }
        s
    })
}

fn ref_name(d: &Descriptor) -> Option<String> {
    let a = d.annotations().as_ref()?;
    a.get("io.containerd.image.name")
        .or_else(|| a.get("org.opencontainers.image.ref.name"))
        .cloned()
}

fn is_index(d: &Descriptor) -> bool {
    matches!(
        d.media_type().as_ref(),
        "application/vnd.oci.image.index.v1+json"
            | "application/vnd.docker.distribution.manifest.list.v2+json"
    )
}

fn is_manifest(d: &Descriptor) -> bool {
    matches!(
        d.media_type().as_ref(),
        "application/vnd.oci.image.manifest.v1+json"
            | "application/vnd.docker.distribution.manifest.v2+json"
    )
}

fn digest_of(src: &Source, d: &Descriptor) -> Result<Sha256Digest> {
    Sha256Digest::parse(d.digest().as_ref(), &src.path)
}

fn parse_index(src: &Source, bytes: &[u8], name: &str) -> Result<ImageIndex> {
    ImageIndex::from_reader(bytes).map_err(|e| src.bad("index", name, e.to_string()))
}

/// Follows nested indexes under one top-level descriptor, collecting manifests.
fn collect(src: &Source, d: &Descriptor, depth: usize, out: &mut Vec<Candidate>) -> Result<()> {
    if is_manifest(d) {
        out.push(Candidate {
            manifest: d.clone(),
            platform: platform_name(d),
        });
    } else if is_index(d) {
        if depth >= MAX_INDEX_DEPTH {
            return Err(src.bad(
                "index",
                d.digest().as_ref(),
                format!("indexes nested more than {MAX_INDEX_DEPTH} deep"),
            ));
        }
        let digest = digest_of(src, d)?;
        let bytes = src.document(&digest, Some(d.size()), "index")?;
        for m in parse_index(src, &bytes, &digest.to_string())?.manifests() {
            collect(src, m, depth + 1, out)?;
        }
    }
    // Anything else (an artifact, a signature) is not an image: skipped.
    Ok(())
}

fn choose_oci(src: &Source, index_bytes: &[u8], want: Option<&str>) -> Result<Chosen> {
    let index = parse_index(src, index_bytes, "index.json")?;
    let tops: Vec<&Descriptor> = index
        .manifests()
        .iter()
        .filter(|d| is_index(d) || is_manifest(d))
        .collect();
    if tops.is_empty() {
        return Err(src.bad("index", "index.json", "it lists no image".into()));
    }
    let names: Vec<String> = tops
        .iter()
        .map(|d| ref_name(d).unwrap_or_else(|| d.digest().to_string()))
        .collect();
    let pick: Vec<usize> = match want {
        Some(w) => (0..tops.len())
            .filter(|&i| reference_matches(&names[i], w))
            .collect(),
        None => (0..tops.len()).collect(),
    };
    let distinct = |ix: &[usize]| {
        let mut v: Vec<&str> = ix.iter().map(|&i| names[i].as_str()).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    if pick.is_empty() {
        return Err(ImageError::NoSuchRef {
            path: src.path.clone(),
            name: want.unwrap_or_default().to_string(),
            names: names.join(", "),
        });
    }
    if distinct(&pick) > 1 {
        return Err(ImageError::Ambiguous {
            path: src.path.clone(),
            count: distinct(&pick),
            names: names.join(", "),
        });
    }
    let mut candidates = Vec::new();
    for &i in &pick {
        collect(src, tops[i], 0, &mut candidates)?;
    }
    let reference = ref_name(tops[pick[0]]);
    // A manifest without a platform in its index entry (a single-platform layout) is
    // judged by its config, which is read anyway.
    let mut platforms = Vec::new();
    let mut chosen = None;
    for c in candidates {
        let digest = digest_of(src, &c.manifest)?;
        let bytes = src.document(&digest, Some(c.manifest.size()), "manifest")?;
        let manifest = ImageManifest::from_reader(&bytes[..])
            .map_err(|e| src.bad("manifest", &digest.to_string(), e.to_string()))?;
        let (config_digest, config) = read_config(src, manifest.config())?;
        let platform = c.platform.unwrap_or_else(|| config_platform(&config));
        let usable = platform == PLATFORM && config_platform(&config) == PLATFORM;
        platforms.push(platform);
        if usable && chosen.is_none() {
            chosen = Some((digest, manifest, config_digest, config));
        }
    }
    let Some((digest, manifest, config_digest, config)) = chosen else {
        return Err(no_platform(src, &platforms));
    };
    let diff_ids = diff_ids(src, &config, &config_digest)?;
    if diff_ids.len() != manifest.layers().len() {
        return Err(src.bad(
            "manifest",
            &digest.to_string(),
            format!(
                "{} layers where its config lists {} diff_ids",
                manifest.layers().len(),
                diff_ids.len()
            ),
        ));
    }
    let mut layers = Vec::new();
    for (d, diff_id) in manifest.layers().iter().zip(diff_ids) {
        let ld = digest_of(src, d)?;
        let compression = match d.media_type().as_ref() {
            "application/vnd.oci.image.layer.v1.tar"
            | "application/vnd.oci.image.layer.nondistributable.v1.tar"
            | "application/vnd.docker.image.rootfs.diff.tar" => Compression::None,
            "application/vnd.oci.image.layer.v1.tar+gzip"
            | "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"
            | "application/vnd.docker.image.rootfs.diff.tar.gzip"
            | "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip" => Compression::Gzip,
            "application/vnd.oci.image.layer.v1.tar+zstd"
            | "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd" => Compression::Zstd,
            other => {
                return Err(ImageError::UnsupportedLayer {
                    path: src.path.clone(),
                    digest: ld.to_string(),
                    media_type: other.to_string(),
                })
            }
        };
        layers.push(Layer {
            member: Source::blob_name(&ld),
            digest: Some(ld),
            size: Some(d.size()),
            compression,
            chunked: d
                .annotations()
                .as_ref()
                .is_some_and(|a| a.contains_key("io.containers.zstd-chunked.manifest-checksum")),
            diff_id,
        });
    }
    Ok(Chosen {
        reference,
        manifest: Some(digest),
        config_digest,
        config,
        layers,
        platforms,
    })
}

/// docker's `manifest.json`: one entry per image, `Config` and `Layers` as member paths.
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct DockerEntry {
    config: String,
    #[serde(default)]
    repo_tags: Option<Vec<String>>,
    layers: Vec<String>,
}

fn choose_docker(src: &Source, bytes: &[u8], want: Option<&str>) -> Result<Chosen> {
    let entries: Vec<DockerEntry> = serde_json::from_slice(bytes)
        .map_err(|e| src.bad("manifest.json", "manifest.json", e.to_string()))?;
    let name_of = |e: &DockerEntry| {
        e.repo_tags
            .as_ref()
            .and_then(|t| t.first().cloned())
            .unwrap_or_else(|| e.config.clone())
    };
    let names: Vec<String> = entries.iter().map(name_of).collect();
    let pick: Vec<&DockerEntry> = match want {
        Some(w) => entries
            .iter()
            .filter(|e| {
                e.repo_tags
                    .iter()
                    .flatten()
                    .any(|t| reference_matches(t, w))
                    || e.config.contains(w)
            })
            .collect(),
        None => entries.iter().collect(),
    };
    let entry = match pick.as_slice() {
        [] if want.is_some() => {
            return Err(ImageError::NoSuchRef {
                path: src.path.clone(),
                name: want.unwrap_or_default().to_string(),
                names: names.join(", "),
            })
        }
        [] => return Err(src.bad("manifest.json", "manifest.json", "it lists no image".into())),
        [one] => *one,
        many => {
            return Err(ImageError::Ambiguous {
                path: src.path.clone(),
                count: many.len(),
                names: names.join(", "),
            })
        }
    };
    let config_bytes = src
        .small_member(&entry.config, "config")?
        .ok_or_else(|| src.missing("config", entry.config.clone()))?;
    let config_digest = Sha256Digest::of(&config_bytes);
    // docker names the config by its digest: check it when the name says one.
    let stem = entry
        .config
        .rsplit('/')
        .next()
        .unwrap_or("")
        .trim_end_matches(".json");
    if stem.len() == 64
        && stem.bytes().all(|b| b.is_ascii_hexdigit())
        && stem != config_digest.hex()
    {
        return Err(ImageError::DigestMismatch {
            path: src.path.clone(),
            what: "config",
            digest: format!("sha256:{stem}"),
            found: config_digest.to_string(),
        });
    }
    let config = ImageConfiguration::from_reader(&config_bytes[..])
        .map_err(|e| src.bad("config", &entry.config, e.to_string()))?;
    let platform = config_platform(&config);
    if platform != PLATFORM {
        return Err(no_platform(src, &[platform]));
    }
    let diff_ids = diff_ids(src, &config, &config_digest)?;
    if diff_ids.len() != entry.layers.len() {
        return Err(src.bad(
            "manifest.json",
            "manifest.json",
            format!(
                "{} layers where the config lists {} diff_ids",
                entry.layers.len(),
                diff_ids.len()
            ),
        ));
    }
    let layers = entry
        .layers
        .iter()
        .zip(diff_ids)
        .map(|(member, diff_id)| Layer {
            member: member.clone(),
            digest: None,
            size: None,
            compression: Compression::Sniff,
            chunked: false,
            diff_id,
        })
        .collect();
    Ok(Chosen {
        reference: entry.repo_tags.as_ref().and_then(|t| t.first().cloned()),
        manifest: None,
        config_digest,
        config,
        layers,
        platforms: vec![platform],
    })
}

fn read_config(src: &Source, d: &Descriptor) -> Result<(Sha256Digest, ImageConfiguration)> {
    let digest = digest_of(src, d)?;
    let bytes = src.document(&digest, Some(d.size()), "config")?;
    let config = ImageConfiguration::from_reader(&bytes[..])
        .map_err(|e| src.bad("config", &digest.to_string(), e.to_string()))?;
    Ok((digest, config))
}

fn config_platform(c: &ImageConfiguration) -> String {
    let mut s = format!("{}/{}", c.os(), c.architecture());
    if let Some(v) = c.variant() {
        s.push('/');
        s.push_str(v);
    }
    s
}

fn diff_ids(
    src: &Source,
    c: &ImageConfiguration,
    digest: &Sha256Digest,
) -> Result<Vec<Sha256Digest>> {
    let ids = c.rootfs().diff_ids();
    if ids.is_empty() {
        return Err(src.bad(
            "config",
            &digest.to_string(),
            "its rootfs lists no layers".into(),
        ));
    }
    ids.iter()
        .map(|d| Sha256Digest::parse(d, &src.path))
        .collect()
}

fn no_platform(src: &Source, platforms: &[String]) -> ImageError {
    let mut found: Vec<&str> = platforms.iter().map(String::as_str).collect();
    found.sort();
    found.dedup();
    ImageError::NoPlatform {
        path: src.path.clone(),
        wanted: PLATFORM,
        found: if found.is_empty() {
            "no image manifests".into()
        } else {
            found.join(", ")
        },
    }
}

/// Whether a stored reference answers to what the user typed: the same, or the same
/// without a registry/library prefix or `:latest` (`redis` finds
/// `docker.io/library/redis:latest`).
pub fn reference_matches(stored: &str, asked: &str) -> bool {
    let norm = |s: &str| {
        let s = s.strip_prefix("docker.io/").unwrap_or(s);
        let s = s.strip_prefix("localhost/").unwrap_or(s);
        let s = s.strip_prefix("library/").unwrap_or(s);
        let has_tag = s
            .rsplit('/')
            .next()
            .is_some_and(|last| last.contains(':') || last.contains('@'));
        if has_tag {
            s.to_string()
        } else {
            format!("{s}:latest")
        }
    };
    stored == asked || norm(stored) == norm(asked)
}
