//! The device's API over texture and surface objects
//! ([`crate::texture`]): creating, binding and destroying them in the
//! object table its global memory holds.

use std::sync::Arc;

use super::Device;
use crate::error::EmuError;
use crate::texture::{BoundObject, Resource, SurfaceObject, TextureObject};

impl Device {
    /// Creates a texture object; the handle is what kernels receive.
    pub fn texture_object_create(&mut self, texture: TextureObject) -> Result<u64, EmuError> {
        texture
            .resource
            .validate()
            .map_err(|e| EmuError::InvalidValue(format!("texture resource: {e}")))?;
        Ok(self.memory.textures.insert(BoundObject::Texture(texture)))
    }

    /// Creates a surface object over level 0 of `resource`.
    pub fn surface_object_create(&mut self, resource: Resource) -> Result<u64, EmuError> {
        resource
            .validate()
            .map_err(|e| EmuError::InvalidValue(format!("surface resource: {e}")))?;
        Ok(self
            .memory
            .textures
            .insert(BoundObject::Surface(SurfaceObject { resource })))
    }

    /// Binds the texture or surface reference variable at `addr` (from
    /// [`Device::get_global`] of a `.texref`/`.surfref`) to the object
    /// `handle`, or unbinds it (`None`): `tex`/`suld`/`sust` naming the
    /// variable use the object bound when they run.
    pub fn bind_reference(&mut self, addr: u64, handle: Option<u64>) {
        self.memory.textures.bind_reference(addr, handle);
    }

    /// The object behind `handle`, if live.
    pub fn bound_object(&self, handle: u64) -> Option<Arc<BoundObject>> {
        self.memory.textures.get(handle).cloned()
    }

    /// Destroys a texture or surface object (`surface` says which is expected).
    pub fn bound_object_destroy(&mut self, handle: u64, surface: bool) -> Result<(), EmuError> {
        let matches = match self.memory.textures.get(handle).map(|o| &**o) {
            Some(BoundObject::Texture(_)) => !surface,
            Some(BoundObject::Surface(_)) => surface,
            None => false,
        };
        if !matches {
            return Err(EmuError::InvalidHandle(format!(
                "{} object {handle}",
                if surface { "surface" } else { "texture" }
            )));
        }
        self.memory.textures.remove(handle);
        Ok(())
    }
}
