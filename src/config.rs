//! The configuration of a run, cut as ripgrep cuts its flags: the config file as written
//! (`schema`: serde structs, low level), where it is looked for (`location`), and its
//! resolution, with the command-line flags, into the checked [`Settings`] of a run
//! (`settings`: high level); and the name the logs give the wrapped server (`server`). Pure:
//! the shell reads the files (`crate::files`) and hands their text over; every key is shown,
//! with its default, in `config.example.toml`.

mod location;
mod schema;
mod server;
mod settings;

pub use location::{
    choose_config, ConfigChoice, ConfigEnv, ConfigOrigin, MissingConfig, CONFIG_ENV,
};
pub(crate) use schema::ConfigFile;
pub use schema::{LogFormat, NonJsonLines, RestartConfig};
pub use server::{server_name, LAUNCHERS};
pub(crate) use settings::files_of;
pub use settings::{
    check_log_level, Flags, LogPath, Settings, Sources, UnknownLogLevel, DEFAULT_MAX_PENDING,
    LOG_LEVEL_ENV,
};
