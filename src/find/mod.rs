//! Locating endpoints in each file: in values, comments, documents held in
//! strings and base64, and in what chart templates render.

pub mod embedded;
pub mod generators;
pub mod inventory;
pub mod jsonfile;
pub mod locate;
pub mod names;
pub mod params;
pub mod resolve;
pub mod summary;
pub mod templates;
