//! The store over real TCP sockets, with clients on threads.

use std::{
    thread,
    time::{Duration, Instant},
};
use symm_runtime::{
    Error,
    store::{StoreClient, StoreServer},
};

fn server() -> StoreServer {
    StoreServer::start("127.0.0.1:0").expect("a free port")
}

fn client(server: &StoreServer) -> StoreClient {
    StoreClient::connect(server.address(), Duration::from_secs(5)).expect("server is up")
}

#[test]
fn set_then_get_and_add() {
    let server = server();
    let mut a = client(&server);
    let mut b = client(&server);
    a.set("key", b"value").expect("set");
    assert_eq!(b.get("key", Duration::from_secs(1)).expect("get"), b"value");
    assert_eq!(a.add("counter", 2).expect("add"), 2);
    assert_eq!(b.add("counter", 3).expect("add"), 5);
    assert!(a.has("key").expect("has"));
    assert!(!a.has("nothing").expect("has"));
}

#[test]
fn get_waits_for_a_later_set() {
    let server = server();
    let address = server.address();
    let writer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        let mut c = StoreClient::connect(address, Duration::from_secs(5)).expect("connect");
        c.set("late", b"here").expect("set");
    });
    let mut reader = client(&server);
    let start = Instant::now();
    let value = reader.get("late", Duration::from_secs(5)).expect("arrives");
    assert_eq!(value, b"here");
    assert!(start.elapsed() >= Duration::from_millis(90));
    writer.join().expect("writer");
}

#[test]
fn get_times_out() {
    let server = server();
    let mut c = client(&server);
    let start = Instant::now();
    assert_eq!(
        c.try_get("never", Duration::from_millis(200))
            .expect("no io error"),
        None
    );
    assert!(start.elapsed() >= Duration::from_millis(190));
    let error = c
        .get("never", Duration::from_millis(50))
        .expect_err("times out");
    assert!(error.to_string().contains("waiting for 'never'"), "{error}");
}

#[test]
fn all_gather_returns_every_rank_in_order() {
    let server = server();
    let address = server.address();
    let handles: Vec<_> = (0..4)
        .map(|rank| {
            thread::spawn(move || {
                let mut c = StoreClient::connect(address, Duration::from_secs(5)).expect("connect");
                c.all_gather(
                    "meta",
                    rank,
                    4,
                    format!("r{rank}").as_bytes(),
                    Duration::from_secs(5),
                )
                .expect("everyone arrives")
            })
        })
        .collect();
    for handle in handles {
        let parts = handle.join().expect("rank thread");
        assert_eq!(
            parts,
            vec![
                b"r0".to_vec(),
                b"r1".to_vec(),
                b"r2".to_vec(),
                b"r3".to_vec()
            ]
        );
    }
}

#[test]
fn all_gather_timeout_names_the_missing_ranks() {
    let server = server();
    let address = server.address();
    // Ranks 0 and 2 of 4 arrive; 1 and 3 never do.
    let late = thread::spawn(move || {
        let mut c = StoreClient::connect(address, Duration::from_secs(5)).expect("connect");
        c.all_gather("meta", 2, 4, b"x", Duration::from_millis(300))
    });
    let mut c = client(&server);
    let error = c
        .all_gather("meta", 0, 4, b"x", Duration::from_millis(300))
        .expect_err("ranks 1 and 3 are missing");
    match &error {
        Error::RendezvousTimeout { missing, key, .. } => {
            assert_eq!(missing, &vec![1, 3]);
            assert_eq!(key, "meta");
        }
        other => panic!("unexpected error {other}"),
    }
    assert!(error.to_string().contains("rank(s) [1, 3]"), "{error}");
    assert!(late.join().expect("thread").is_err());
}

#[test]
fn connecting_to_no_server_times_out() {
    // A port nobody listens on: bind one, then drop it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let start = Instant::now();
    let error = StoreClient::connect(("127.0.0.1", port), Duration::from_millis(200))
        .err()
        .expect("no server");
    assert!(start.elapsed() >= Duration::from_millis(190));
    assert!(
        error.to_string().contains("cannot reach the store"),
        "{error}"
    );
}

#[test]
fn threads_of_one_process_join_as_a_group() {
    use symm_runtime::group::{Group, GroupConfig};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port");
    let handles: Vec<_> = (0..3)
        .map(|rank| {
            thread::spawn(move || {
                let mut group = Group::join(GroupConfig::thread(rank, 3, port)).expect("joins");
                let parts = group
                    .store
                    .all_gather("t", rank, 3, &[rank as u8], Duration::from_secs(5))
                    .expect("gathers");
                assert!(group.peer_access, "threads of one process share a host");
                parts
            })
        })
        .collect();
    for handle in handles {
        assert_eq!(
            handle.join().expect("thread"),
            vec![vec![0u8], vec![1], vec![2]]
        );
    }
}
