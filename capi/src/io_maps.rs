//! Conversions between core's load/save records and the C map handles, shared by the file
//! functions (`io`) and the custom-stream functions (`io_types`).

use crate::handle;
use crate::map::ArrayMap;
use crate::map_string::StringMap;
use crate::prelude::*;
use crate::string::cstring;
use crate::types::*;
use mlx_arm_core::io::arrays::{Loaded, Metadata};
use mlx_arm_core::{Array, Error, Result};

/// Name/array pairs of a map handle, in key order.
pub(crate) unsafe fn named_arrays(m: mlx_map_string_to_array) -> Result<Vec<(String, Array)>> {
    let map = handle::get(m)?;
    map.iter()
        .map(|(k, a)| {
            let k = k.to_str().map_err(|_| Error::invalid("save", "array names must be UTF-8"))?;
            Ok((String::from(k), a.clone()))
        })
        .collect()
}

/// Key/value pairs of a string map; the empty handle is no metadata.
pub(crate) unsafe fn named_strings(m: mlx_map_string_to_string) -> Result<Vec<(String, String)>> {
    if m.ctx.is_null() {
        return Ok(Vec::new());
    }
    handle::get(m)?
        .iter()
        .map(|(k, v)| match (k.to_str(), v.to_str()) {
            (Ok(k), Ok(v)) => Ok((String::from(k), String::from(v))),
            _ => Err(Error::invalid("save", "metadata must be UTF-8")),
        })
        .collect()
}

/// A loaded safetensors file as mlx-c's pair of maps: the arrays and the `__metadata__` strings.
pub(crate) fn safetensors_maps(loaded: Loaded) -> (ArrayMap, StringMap) {
    let arrays: ArrayMap = loaded.arrays.into_iter().map(|(k, a)| (cstring(&k), a)).collect();
    let meta: StringMap = match loaded.metadata {
        Metadata::Strings(v) => v.into_iter().map(|(k, v)| (cstring(&k), cstring(&v))).collect(),
        _ => StringMap::new(),
    };
    (arrays, meta)
}
