//! What the server benches share: a blocking JSON-RPC client on the bench server's
//! socket.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One connection, one request at a time.
pub struct Rpc {
    out: UnixStream,
    input: BufReader<UnixStream>,
    next: u64,
    line: String,
}

impl Rpc {
    /// Connects to `socket`, waiting (up to 30 s) for the server to listen.
    pub fn connect(socket: &Path) -> Rpc {
        let deadline = Instant::now() + Duration::from_secs(30);
        let stream = loop {
            if let Ok(s) = UnixStream::connect(socket) {
                break s;
            }
            assert!(Instant::now() < deadline, "the bench server never listened");
            std::thread::sleep(Duration::from_millis(10));
        };
        Rpc {
            input: BufReader::new(stream.try_clone().unwrap()),
            out: stream,
            next: 0,
            line: String::new(),
        }
    }

    /// Sends one request and reads its answer (which must not be an error).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut msg =
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
                .to_string();
        msg.push('\n');
        self.out.write_all(msg.as_bytes()).unwrap();
        self.line.clear();
        self.input.read_line(&mut self.line).unwrap();
        let v: Value = serde_json::from_str(&self.line).unwrap();
        assert!(v.get("error").is_none(), "{v}");
        v
    }
}
