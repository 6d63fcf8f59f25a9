//! A real browser for the tests of HTML pages: headless Chromium (Debian's `chromium`)
//! loads a page from disk, runs its scripts and hands back the DOM it built, the page's
//! console messages, or a screenshot. Checks read what the browser made of the page, not
//! the HTML file.

use std::path::Path;
use std::process::Command;
use wio_require::{skip, Capability};

/// True when Chromium is here; otherwise skips `test` (needs [`Capability::Chromium`]).
pub fn require_chromium(test: &str) -> bool {
    let ok = Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip(
            test,
            Capability::Chromium,
            "no chromium (apt-get install chromium; ci/test.sh does)",
        );
    }
    ok
}

/// The DOM headless Chromium built from `page` once its scripts ran (with `screenshot`:
/// nothing, a 1280x2000 PNG written there instead), and the console messages the page
/// logged (errors included).
pub fn browse(page: &Path, screenshot: Option<&Path>) -> (String, Vec<String>) {
    let url = format!("file://{}", page.display());
    let mut c = Command::new("chromium");
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,2000",
    ]);
    match screenshot {
        Some(p) => c.arg(format!("--screenshot={}", p.display())),
        None => c.arg("--dump-dom"),
    };
    let o = c.arg(&url).output().expect("chromium");
    let err = String::from_utf8_lossy(&o.stderr);
    // Chromium logs a page's console as `...:INFO:CONSOLE:LINE] "message", source: ...`.
    let console = err
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    assert!(o.status.success(), "chromium: {err}");
    (String::from_utf8_lossy(&o.stdout).into_owned(), console)
}

/// The table row (`<tr ...>...</tr>`) of the DOM `dom` whose attributes hold `attr`.
pub fn row<'a>(dom: &'a str, attr: &str) -> Option<&'a str> {
    let at = dom.find(attr)?;
    let start = dom[..at].rfind("<tr")?;
    let end = dom[at..].find("</tr>")? + at;
    Some(&dom[start..end])
}
