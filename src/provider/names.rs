//! Exported tool names (being written).
