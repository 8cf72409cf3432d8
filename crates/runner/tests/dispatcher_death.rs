//! The dispatcher killed mid-run: its lanes see their stdin close and exit, and every card's lease
//! is free again.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::*;
use platform_common::lease::LeaseConfig;
use platform_common::DeviceLease;

#[test]
fn killing_the_dispatcher_frees_every_card() {
    let sb = Sandbox::new();
    let hook = sb.pause_hook();
    let args = Sandbox::selection("0,1", &["VectorAdd", "Matmul"], &["--test-hooks"]);
    let mut cmd = sb.command("a5", &args);
    // A lane pauses in the middle of a case, holding its card.
    cmd.env("ONBOARD_TEST_LANE_PAUSE", hook.at("during_case"));
    let mut dispatcher = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    hook.announcement()
        .recv_timeout(Duration::from_secs(60))
        .expect("a lane paused mid-case");
    let cfg = LeaseConfig { dir: sb.lock_dir() };
    for card in [0, 1] {
        assert!(
            DeviceLease::try_acquire(&cfg, card, "test").is_err(),
            "card {card} is held while the run goes"
        );
    }
    dispatcher.kill().unwrap();
    dispatcher.wait().unwrap();
    for card in [0u32, 1] {
        let (tx, rx) = mpsc::channel();
        let cfg = cfg.clone();
        std::thread::spawn(move || {
            let _ = tx.send(DeviceLease::acquire(&cfg, card, "after").map(|l| l.card()));
        });
        let got = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("card {card} still held after the dispatcher died"));
        assert_eq!(got.unwrap(), card);
    }
}
