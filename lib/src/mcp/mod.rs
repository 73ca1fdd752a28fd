//! MCP, the Model Context Protocol: the catalog served to any MCP client (`toolctl mcp
//! serve`). [`view`] is what the server shows and does, through `export`, `invoke` and
//! `pick`; [`serve`] speaks the protocol with the official SDK; [`guard`] keeps its HTTP
//! transport to those who hold its token, within caps.

pub mod cache;
pub mod guard;
pub mod import;
pub mod serve;
pub mod view;
