//! The endpoints of the network scorers (`embed`, `hybrid`, `llm`): the caller's overrides
//! (the command line's flags) over `pick.embed` / `pick.llm` of `toolctl.json`, the API key
//! from the catalog secret the configuration names.

use super::{DEFAULT_EMBED_BATCH, Endpoint, PickError, Scorer};
use crate::base::secrets::{self, Secrets};
use crate::catalog::config::{EndpointConfig, PickConfig};
use std::time::Duration;

/// Values that override `toolctl.json`'s endpoints (the command line's flags).
#[derive(Debug, Clone, Default)]
pub struct EndpointOverrides {
    pub embed_url: Option<String>,
    pub embed_model: Option<String>,
    pub llm_url: Option<String>,
    pub llm_model: Option<String>,
}

/// The endpoints a scorer needs.
#[derive(Debug)]
pub struct Endpoints {
    pub embed: Option<Endpoint>,
    pub embed_batch: usize,
    pub llm: Option<Endpoint>,
}

impl Endpoints {
    /// No endpoints: the local scorers need none.
    pub fn none() -> Self {
        Self {
            embed: None,
            embed_batch: DEFAULT_EMBED_BATCH,
            llm: None,
        }
    }

    /// The endpoints `scorer` needs (none for keyword and bm25): overrides over
    /// `toolctl.json`.
    pub fn resolve(
        config: &PickConfig,
        overrides: &EndpointOverrides,
        scorer: Scorer,
    ) -> Result<Self, PickError> {
        let needs = |scorers: &[Scorer]| scorers.contains(&scorer);
        Ok(Self {
            embed: if needs(&[Scorer::Embed, Scorer::Hybrid]) {
                endpoint(
                    &config.embed,
                    &overrides.embed_url,
                    &overrides.embed_model,
                    "embed",
                )?
            } else {
                None
            },
            embed_batch: config
                .embed
                .batch_size
                .filter(|n| *n > 0)
                .unwrap_or(DEFAULT_EMBED_BATCH),
            llm: if needs(&[Scorer::Llm]) {
                endpoint(&config.llm, &overrides.llm_url, &overrides.llm_model, "llm")?
            } else {
                None
            },
        })
    }
}

impl EndpointOverrides {
    /// Whether an embeddings endpoint is set, by the overrides or `toolctl.json`.
    pub fn has_embed(&self, config: &PickConfig) -> bool {
        (self.embed_url.is_some() || config.embed.base_url.is_some())
            && (self.embed_model.is_some() || config.embed.model.is_some())
    }
}

/// The endpoint of a network scorer: overrides over `toolctl.json`; the API key from the
/// catalog secret the configuration names.
fn endpoint(
    config: &EndpointConfig,
    url: &Option<String>,
    model: &Option<String>,
    which: &str,
) -> Result<Option<Endpoint>, PickError> {
    let (Some(base_url), Some(model)) = (
        url.clone().or_else(|| config.base_url.clone()),
        model.clone().or_else(|| config.model.clone()),
    ) else {
        return Ok(None);
    };
    let api_key = match &config.api_key_secret {
        None => None,
        Some(name) => {
            let secrets = Secrets::load()?;
            Some(secrets.get(name).map_err(|unset| PickError::Invalid {
                message: format!(
                    "pick.{which}.apiKeySecret names the secret '{name}', which {unset}"
                ),
                hint: format!(
                    "set TOOLCTL_SECRET_{name}, or add \"{name}\" to the secrets file ({})",
                    secrets::file().map_or_else(
                        || "~/.config/toolctl/secrets.json".to_owned(),
                        |p| p.display().to_string()
                    )
                ),
            })?)
        }
    };
    Ok(Some(Endpoint {
        base_url: base_url.trim_end_matches('/').to_owned(),
        model,
        api_key,
        timeout: Duration::from_millis(config.timeout_ms.unwrap_or(30_000)),
    }))
}
