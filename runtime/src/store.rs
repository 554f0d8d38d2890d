//! A key-value store over TCP for rendezvous, like c10d's TCPStore: rank 0
//! serves it, every rank is a client. `get` and `wait` block until the keys
//! exist or a timeout passes; an all-gather names the ranks that never
//! arrived.

use crate::error::{Error, Result};
use std::{
    collections::HashMap,
    io::{BufReader, BufWriter, Read, Write},
    net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs},
    sync::{Arc, Condvar, Mutex},
    thread,
    time::{Duration, Instant},
};

const SET: u8 = 1;
const GET: u8 = 2;
const ADD: u8 = 3;
const HAS: u8 = 4;
const FOUND: u8 = 10;
const MISSING: u8 = 11;

#[derive(Default)]
struct Shared {
    data: Mutex<HashMap<String, Vec<u8>>>,
    changed: Condvar,
}

/// The serving side; runs on threads until the process ends.
pub struct StoreServer {
    address: SocketAddr,
}

impl StoreServer {
    /// Serves on `address` (port 0 picks a free port).
    pub fn start(address: impl ToSocketAddrs) -> Result<Self> {
        let listener =
            TcpListener::bind(address).map_err(|e| Error::io("store: cannot listen", e))?;
        let address = listener
            .local_addr()
            .map_err(|e| Error::io("store: no local address", e))?;
        let shared = Arc::new(Shared::default());
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    // A client that goes away ends its thread; nothing to report.
                    let _ = serve(stream, &shared);
                });
            }
        });
        Ok(Self { address })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

fn read_u8(reader: &mut impl Read) -> std::io::Result<u8> {
    let mut byte = [0u8; 1];
    reader.read_exact(&mut byte)?;
    Ok(byte[0])
}

fn read_u64(reader: &mut impl Read) -> std::io::Result<u64> {
    let mut bytes = [0u8; 8];
    reader.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

fn read_bytes(reader: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let len = read_u64(reader)?;
    if len > 1 << 30 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "store message over 1 GiB",
        ));
    }
    let mut bytes = vec![0u8; len as usize];
    reader.read_exact(&mut bytes)?;
    Ok(bytes)
}

fn read_string(reader: &mut impl Read) -> std::io::Result<String> {
    String::from_utf8(read_bytes(reader)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "key is not UTF-8"))
}

fn write_bytes(writer: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    writer.write_all(&(bytes.len() as u64).to_le_bytes())?;
    writer.write_all(bytes)
}

fn serve(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = BufWriter::new(stream);
    loop {
        let op = match read_u8(&mut reader) {
            Ok(op) => op,
            Err(_) => return Ok(()),
        };
        let key = read_string(&mut reader)?;
        match op {
            SET => {
                let value = read_bytes(&mut reader)?;
                let mut data = shared.data.lock().unwrap_or_else(|p| p.into_inner());
                data.insert(key, value);
                shared.changed.notify_all();
                writer.write_all(&[FOUND])?;
            }
            GET => {
                let timeout = Duration::from_millis(read_u64(&mut reader)?);
                let deadline = Instant::now() + timeout;
                let mut data = shared.data.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if let Some(value) = data.get(&key) {
                        writer.write_all(&[FOUND])?;
                        write_bytes(&mut writer, value)?;
                        break;
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        writer.write_all(&[MISSING])?;
                        break;
                    }
                    data = shared
                        .changed
                        .wait_timeout(data, deadline - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
            ADD => {
                let delta = read_u64(&mut reader)? as i64;
                let mut data = shared.data.lock().unwrap_or_else(|p| p.into_inner());
                let current = data
                    .get(&key)
                    .and_then(|v| v.as_slice().try_into().ok())
                    .map(i64::from_le_bytes)
                    .unwrap_or(0);
                let next = current + delta;
                data.insert(key, next.to_le_bytes().to_vec());
                shared.changed.notify_all();
                writer.write_all(&[FOUND])?;
                writer.write_all(&next.to_le_bytes())?;
            }
            HAS => {
                let data = shared.data.lock().unwrap_or_else(|p| p.into_inner());
                writer.write_all(&[if data.contains_key(&key) {
                    FOUND
                } else {
                    MISSING
                }])?;
            }
            _ => return Ok(()),
        }
        writer.flush()?;
    }
}

/// One connection to the store.
pub struct StoreClient {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
}

impl StoreClient {
    /// Connects, retrying until the server is up or `timeout` passes.
    pub fn connect(address: impl ToSocketAddrs + Copy, timeout: Duration) -> Result<Self> {
        let deadline = Instant::now() + timeout;
        loop {
            match TcpStream::connect(address) {
                Ok(stream) => {
                    stream
                        .set_nodelay(true)
                        .map_err(|e| Error::io("store: socket option", e))?;
                    let reader = BufReader::new(
                        stream
                            .try_clone()
                            .map_err(|e| Error::io("store: socket clone", e))?,
                    );
                    return Ok(Self {
                        reader,
                        writer: BufWriter::new(stream),
                    });
                }
                Err(error) if Instant::now() >= deadline => {
                    return Err(Error::io(
                        format!("store: cannot reach the store within {timeout:?}"),
                        error,
                    ));
                }
                Err(_) => thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    fn request(
        &mut self,
        op: u8,
        key: &str,
        body: impl FnOnce(&mut BufWriter<TcpStream>) -> std::io::Result<()>,
    ) -> Result<u8> {
        let io = |e| Error::io("store: connection lost", e);
        self.writer.write_all(&[op]).map_err(io)?;
        write_bytes(&mut self.writer, key.as_bytes()).map_err(io)?;
        body(&mut self.writer).map_err(io)?;
        self.writer.flush().map_err(io)?;
        read_u8(&mut self.reader).map_err(io)
    }

    pub fn set(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.request(SET, key, |w| write_bytes(w, value))?;
        Ok(())
    }

    /// The value of `key`, waiting up to `timeout` for it; `None` on timeout.
    pub fn try_get(&mut self, key: &str, timeout: Duration) -> Result<Option<Vec<u8>>> {
        let millis = timeout.as_millis().min(u64::MAX as u128) as u64;
        let status = self.request(GET, key, |w| w.write_all(&millis.to_le_bytes()))?;
        if status != FOUND {
            return Ok(None);
        }
        read_bytes(&mut self.reader)
            .map(Some)
            .map_err(|e| Error::io("store: connection lost", e))
    }

    pub fn get(&mut self, key: &str, timeout: Duration) -> Result<Vec<u8>> {
        self.try_get(key, timeout)?
            .ok_or_else(|| Error::Store(format!("timed out after {timeout:?} waiting for '{key}'")))
    }

    pub fn add(&mut self, key: &str, delta: i64) -> Result<i64> {
        self.request(ADD, key, |w| w.write_all(&delta.to_le_bytes()))?;
        let mut bytes = [0u8; 8];
        self.reader
            .read_exact(&mut bytes)
            .map_err(|e| Error::io("store: connection lost", e))?;
        Ok(i64::from_le_bytes(bytes))
    }

    pub fn has(&mut self, key: &str) -> Result<bool> {
        Ok(self.request(HAS, key, |_| Ok(()))? == FOUND)
    }

    /// Publishes `value` as this rank's part of `prefix` and returns every
    /// rank's part, in rank order. Ranks that do not publish within
    /// `timeout` are named in the error.
    pub fn all_gather(
        &mut self,
        prefix: &str,
        rank: usize,
        world: usize,
        value: &[u8],
        timeout: Duration,
    ) -> Result<Vec<Vec<u8>>> {
        self.set(&format!("{prefix}/{rank}"), value)?;
        let deadline = Instant::now() + timeout;
        let mut parts = Vec::with_capacity(world);
        for peer in 0..world {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.try_get(&format!("{prefix}/{peer}"), left)? {
                Some(part) => parts.push(part),
                None => {
                    let mut missing = Vec::new();
                    for other in peer..world {
                        if !self.has(&format!("{prefix}/{other}"))? {
                            missing.push(other);
                        }
                    }
                    return Err(Error::RendezvousTimeout {
                        key: prefix.to_owned(),
                        missing,
                        seconds: timeout.as_secs_f64(),
                    });
                }
            }
        }
        Ok(parts)
    }

    /// Every rank reaches `name` before any leaves it.
    pub fn barrier(
        &mut self,
        name: &str,
        rank: usize,
        world: usize,
        timeout: Duration,
    ) -> Result<()> {
        self.all_gather(&format!("barrier/{name}"), rank, world, &[], timeout)
            .map(|_| ())
    }
}
