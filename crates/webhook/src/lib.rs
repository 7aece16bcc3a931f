//! The way out: posting a signed webhook to a destination the user approved.
//!
//! It knows nothing of events or of the other Tidings crates: the daemon hands it a URL,
//! headers and a body, and gets back a reply or a categorised failure.
//!
//! Module map:
//!
//! - [`secret`]: [`Secret`], a `whsec_` signing key (24 to 64 bytes) that never prints.
//! - [`sign`]: [`signature`], the Standard Webhooks `webhook-signature` header, one `v1,`
//!   entry per secret while one is being rotated.
//! - [`origin`]: [`Origin`] (an allow-list entry: scheme, host, port; plain http only for
//!   this machine) and [`CallbackUrl`], parsed and normalised.
//! - [`address`]: the address rule, [`refusal`]: which resolved addresses an origin's
//!   deliveries may connect to.
//! - [`outcome`]: [`Category`] (the wire's `lastError` names), [`Failure`], and [`classify`],
//!   a reply's status to a [`Verdict`].
//! - [`post`]: [`Poster`], one POST over a fresh connection: resolve and check every time,
//!   TLS through rustls (ring, the system's roots), HTTP/1 through hyper, no redirects, a
//!   time limit and a cap on the reply ([`PostLimits`], [`Reply`]).

pub mod address;
pub mod origin;
pub mod outcome;
#[cfg(feature = "post")]
pub mod post;
pub mod reply;
pub mod secret;
pub mod sign;

pub use address::{Refusal, refusal};
pub use origin::{CallbackUrl, Host, Origin, OriginError, UrlError};
pub use outcome::{Category, Failure, Verdict, classify};
#[cfg(feature = "post")]
pub use post::{Poster, TlsSetupError};
pub use reply::{PostLimits, Reply};
pub use secret::{MAX_SECRET_BYTES, MIN_SECRET_BYTES, Secret, SecretError};
pub use sign::signature;
