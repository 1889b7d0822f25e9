//! The local web page of copse-hooks (`copse-hooks ui`).
//!
//! [`Server::bind`] listens on 127.0.0.1 only (a free port unless one is asked for)
//! and makes a random token; [`Server::url`] is the address to open. Every request
//! must carry the token (`?token=` or the `X-Copse-Token` header; state-changing
//! requests only the header), name a loopback `Host` (a DNS-rebinding page cannot
//! reach the server under another name), and gets a strict Content-Security-Policy.
//! There are no CORS headers: another origin cannot read a response.
//!
//! The page reads the audit store (read-only) and the same discovery as `list`. It
//! changes nothing on disk except by running the tester (a dry run of one hook, as
//! `copse-hooks test`) and the explicit trust actions (each confirmed against the
//! preview it was shown).

mod api;
mod assets;
mod security;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use copse_hooks::Engine;

pub use security::Token;

/// Builds the engine for a request: discovery, settings and trust as the CLI's `list`
/// sees them. Called again after a trust action, so the page shows the new state.
pub type EngineFactory = Arc<dyn Fn() -> Result<Engine, String> + Send + Sync>;

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UiError {
    /// The port could not be bound.
    #[error("cannot listen on {addr}: {cause}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the OS said.
        cause: std::io::Error,
    },
    /// No random token could be made.
    #[error("cannot make a random token: {0}")]
    Random(String),
    /// Serving failed.
    #[error("the web server stopped: {0}")]
    Serve(std::io::Error),
}

/// How to start the server.
#[derive(Clone)]
pub struct UiOptions {
    /// The port on 127.0.0.1; `0` picks a free one.
    pub port: u16,
    /// Builds the engine (discovery, settings, trust).
    pub engine: EngineFactory,
}

/// A bound server, not yet serving.
pub struct Server {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    token: Token,
    state: Arc<api::State>,
}

impl Server {
    /// Binds 127.0.0.1:`port` and makes the token. Must run inside a tokio runtime.
    pub async fn bind(options: UiOptions) -> Result<Server, UiError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, options.port));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| UiError::Bind {
                addr,
                cause: source,
            })?;
        let addr = listener.local_addr().map_err(|source| UiError::Bind {
            addr,
            cause: source,
        })?;
        let token = Token::random().map_err(UiError::Random)?;
        Ok(Server {
            listener,
            addr,
            state: Arc::new(api::State::new(options.engine, token.as_str().to_string())),
            token,
        })
    }
    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The token every request must carry.
    pub fn token(&self) -> &str {
        self.token.as_str()
    }

    /// The page's address, token included.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token.as_str())
    }

    /// Serves until `shutdown` completes, then waits for open connections to finish
    /// (an open page's live-update stream never does: to stop at once, drop the future).
    pub async fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), UiError> {
        let guard = security::Guard::new(self.addr.port(), self.token);
        let app = api::router(self.state).layer(axum::middleware::from_fn_with_state(
            Arc::new(guard),
            security::check,
        ));
        axum::serve(self.listener, app)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(UiError::Serve)
    }

    /// Serves until the process ends.
    pub async fn run(self) -> Result<(), UiError> {
        self.run_until(std::future::pending()).await
    }
}
