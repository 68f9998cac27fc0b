//! The only code on a printer's socket: one TCP connection to its raw port,
//! a query written and its answer read through the sans-IO parsers of
//! [`super::zpl`], every step under a deadline.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::zpl::{self, HostStatus, ReplyError};

/// Bytes read from the printer at a time.
const READ_CHUNK_BYTES: usize = 512;

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("connecting to {0}: timed out")]
    ConnectTimeout(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the printer closed the connection")]
    Closed,
    #[error("{0}")]
    Reply(#[from] ReplyError),
}

/// An open connection to a printer's raw port.
pub struct Link {
    stream: TcpStream,
    /// Bytes read and not yet parsed.
    buf: Vec<u8>,
}

impl Link {
    pub async fn connect(address: &str, timeout: Duration) -> Result<Link, LinkError> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(address))
            .await
            .map_err(|_| LinkError::ConnectTimeout(address.to_owned()))??;
        stream.set_nodelay(true)?;
        Ok(Link {
            stream,
            buf: Vec::new(),
        })
    }

    /// Writes all of `bytes`. An error means the printer may have got a
    /// prefix of them and not the rest.
    pub async fn send(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), LinkError> {
        tokio::time::timeout(timeout, self.stream.write_all(bytes))
            .await
            .map_err(|_| LinkError::Timeout(timeout))??;
        Ok(())
    }

    /// Reads until `parse` finds a whole answer at the front of the
    /// buffer, which it then drops.
    async fn answer<T>(
        &mut self,
        timeout: Duration,
        mut parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>, ReplyError>,
    ) -> Result<T, LinkError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some((value, used)) = parse(&self.buf)? {
                self.buf.drain(..used);
                return Ok(value);
            }
            let mut chunk = [0u8; READ_CHUNK_BYTES];
            let read = tokio::time::timeout_at(deadline, self.stream.read(&mut chunk))
                .await
                .map_err(|_| LinkError::Timeout(timeout))??;
            if read == 0 {
                return Err(LinkError::Closed);
            }
            self.buf.extend_from_slice(&chunk[..read]);
        }
    }

    /// Asks `~HS` and reads the three strings.
    pub async fn host_status(&mut self, timeout: Duration) -> Result<HostStatus, LinkError> {
        self.send(zpl::HOST_STATUS_QUERY, timeout).await?;
        self.read_host_status(timeout).await
    }

    /// Reads a host status already asked for.
    pub async fn read_host_status(&mut self, timeout: Duration) -> Result<HostStatus, LinkError> {
        self.answer(timeout, zpl::parse_host_status).await
    }

    /// Reads job `job_id`'s tag read-back (`^HV`).
    pub async fn read_verification(
        &mut self,
        job_id: &str,
        timeout: Duration,
    ) -> Result<String, LinkError> {
        self.answer(timeout, |buf| zpl::parse_verification(buf, job_id))
            .await
    }
}
