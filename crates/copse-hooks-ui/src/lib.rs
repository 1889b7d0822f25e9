//! The local web page of copse-hooks (`copse-hooks ui`).
//!
//! [`Server::bind`] listens on 127.0.0.1 only (a free port unless one is asked for).
//! Nothing reusable ever leaves the process: [`Server::login_url`] (and
//! [`Logins::login_url`]) is an address with a one-time sign-in code, which is what
//! the CLI prints and hands to the browser opener — whose argv any local process can
//! read. Opening it spends the code and sets an `HttpOnly; SameSite=Strict` session
//! cookie; every other request must carry that cookie, name a loopback `Host` (a
//! DNS-rebinding page cannot reach the server under another name), and gets a strict
//! Content-Security-Policy. State-changing requests must also carry the nonce of a
//! page this session loaded (`X-Copse-Nonce`). There are no CORS headers: another
//! origin cannot read a response.
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
use std::time::Duration;

use copse_hooks::Engine;

pub use security::{CODE_TTL, NONCE_HEADER};

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
    /// No random sign-in code could be made.
    #[error("cannot make a sign-in code: {0}")]
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
    /// How long a one-time sign-in code stays valid ([`CODE_TTL`] by default).
    pub code_ttl: Duration,
}

impl UiOptions {
    /// A free port unless `port` names one, and codes that live [`CODE_TTL`].
    pub fn new(port: u16, engine: EngineFactory) -> UiOptions {
        UiOptions {
            port,
            engine,
            code_ttl: CODE_TTL,
        }
    }
}

/// Mints one-time sign-in addresses for a server, also while it serves.
#[derive(Clone)]
pub struct Logins {
    addr: SocketAddr,
    auth: Arc<security::Auth>,
}

impl Logins {
    /// A fresh address that signs a browser in once, within the code's life; safe to
    /// print or to pass to a browser opener (once spent it grants nothing).
    pub fn login_url(&self) -> Result<String, UiError> {
        let code = self.auth.mint_code().map_err(UiError::Random)?;
        Ok(format!("http://{}/?code={code}", self.addr))
    }

    /// The name of the session cookie (one per port).
    pub fn cookie_name(&self) -> String {
        self.auth.cookie_name()
    }
}

/// A bound server, not yet serving.
pub struct Server {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    auth: Arc<security::Auth>,
    state: Arc<api::State>,
}

impl Server {
    /// Binds 127.0.0.1:`port`. Must run inside a tokio runtime.
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
        let auth = Arc::new(security::Auth::new(addr.port(), options.code_ttl));
        Ok(Server {
            listener,
            addr,
            state: Arc::new(api::State::new(options.engine, Arc::clone(&auth))),
            auth,
        })
    }
    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address, without a credential (a browser that signed in uses it).
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// A fresh one-time sign-in address (see [`Logins::login_url`]).
    pub fn login_url(&self) -> Result<String, UiError> {
        self.logins().login_url()
    }

    /// The handle that mints sign-in addresses after [`Server::run`] took the server.
    pub fn logins(&self) -> Logins {
        Logins {
            addr: self.addr,
            auth: Arc::clone(&self.auth),
        }
    }

    /// Serves until `shutdown` completes, then waits for open connections to finish
    /// (an open page's live-update stream never does: to stop at once, drop the future).
    pub async fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), UiError> {
        let guard = security::Guard::new(self.addr.port(), self.auth);
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
