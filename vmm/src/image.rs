//! `wio image import` and `wio image list`: container images as root disks (the work is in
//! the `wio-images` crate; this prints it).

use crate::cli::ImageCommand;
use std::time::Instant;
use wio_images::{launch, store, ImportOptions, Record};
use wio_machines::arch::riscv64::DEFAULT_CMDLINE;
use wio_machines::error::{Result, WioError};
use wio_machines::machine::{guests, RunConfig};

/// Runs a `wio image` subcommand.
pub fn run(cmd: &ImageCommand) -> Result<i32> {
    match cmd {
        ImageCommand::Import {
            path,
            reference,
            name,
            size,
            json,
        } => {
            let opts = ImportOptions {
                path: path.clone(),
                reference: reference.clone(),
                name: name.clone(),
                size_mib: *size,
            };
            let wall = Instant::now();
            let imported = wio_images::import(&opts, &mut |step| eprintln!("wio: image: {step}"))?;
            let r = &imported.record;
            if *json {
                print_json(&serde_json::json!({
                    "record": r,
                    "disk": imported.disk,
                    "cached": imported.cached,
                    "wall_secs": wall.elapsed().as_secs_f64(),
                }))?;
            } else {
                let verb = if imported.cached {
                    "already imported"
                } else {
                    "imported"
                };
                println!("{verb} {} ({})", r.name(), r.platform);
                println!("  id          {}", r.id);
                if let Some(m) = &r.manifest {
                    println!("  manifest    {m}");
                }
                println!(
                    "  disk        {} ({} MiB, {} paths, {} MiB of files, {} layers)",
                    imported.disk.display(),
                    r.disk_bytes >> 20,
                    r.entries,
                    r.content_bytes >> 20,
                    r.layers
                );
                describe(r);
                println!("  took        {:.2} s", wall.elapsed().as_secs_f64());
            }
            Ok(0)
        }
        ImageCommand::List { json } => {
            let cache = store::cache_dir()?;
            let all = store::list(&cache)?;
            if *json {
                let items: Vec<serde_json::Value> = all
                    .iter()
                    .map(|(dir, r)| serde_json::json!({ "record": r, "disk": dir.join(&r.disk) }))
                    .collect();
                print_json(&serde_json::Value::Array(items))?;
            } else if all.is_empty() {
                println!("no images imported yet; `wio image import PATH` imports one");
            } else {
                println!(
                    "{:<40} {:<20} {:>8} {:>8}  DISK",
                    "NAME", "ID", "MIB", "PATHS"
                );
                for (dir, r) in &all {
                    println!(
                        "{:<40} {:<20} {:>8} {:>8}  {}",
                        r.references.join(","),
                        store::short(&r.id),
                        r.disk_bytes >> 20,
                        r.entries,
                        dir.join(&r.disk).display()
                    );
                }
            }
            Ok(0)
        }
    }
}

/// `wio run --image REF [-- ARGS]`: the machine boots the small kernel with its initramfs,
/// the image runtime and the run's own segment (see `wio_images::launch`), the image's
/// disk as /dev/vda, and a command line without `root=` (the launcher mounts the disk).
pub fn configure_run(cfg: &mut RunConfig, reference: &str, args: &[String]) -> Result<()> {
    let overrides = launch::Overrides {
        command: (!args.is_empty()).then(|| args.to_vec()),
        ..launch::Overrides::default()
    };
    let m = guests::image_machine(reference, &overrides)?;
    cfg.initrd = Some(m.initrd);
    cfg.guest = Some("small".into());
    cfg.disk = Some(m.disk);
    cfg.cmdline = Some(DEFAULT_CMDLINE.to_string());
    Ok(())
}

/// The image's run configuration, one line each.
fn describe(r: &Record) {
    let c = &r.config;
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            format!("{v:?}")
        }
    };
    println!("  entrypoint  {}", list(&c.entrypoint));
    println!("  cmd         {}", list(&c.cmd));
    println!(
        "  user        {}",
        if c.user.is_empty() {
            "root (default)"
        } else {
            &c.user
        }
    );
    println!(
        "  workdir     {}",
        if c.working_dir.is_empty() {
            "/"
        } else {
            &c.working_dir
        }
    );
    println!("  env         {}", list(&c.env));
    if !c.exposed_ports.is_empty() {
        println!("  ports       {}", c.exposed_ports.join(" "));
    }
}

fn print_json(v: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|source| WioError::Encode {
        what: "image record",
        source,
    })?;
    println!("{text}");
    Ok(())
}
