//! The `embed` scorer (being written).
