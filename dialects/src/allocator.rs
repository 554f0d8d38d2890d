//! `#symm_mem.allocator<kind, @group>`: the memory space of comm buffers.

use crate::ffi;
use melior::{
    Context, StringRef,
    ir::{Attribute, AttributeLike, Type, TypeLike},
};
use std::fmt;

/// Which allocator backs a comm buffer (the ODS enum `AllocatorKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AllocatorKind {
    Symmetric,
}

impl AllocatorKind {
    fn to_raw(self) -> i32 {
        match self {
            Self::Symmetric => 0,
        }
    }

    fn from_raw(raw: i32) -> Option<Self> {
        match raw {
            0 => Some(Self::Symmetric),
            _ => None,
        }
    }
}

impl fmt::Display for AllocatorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Symmetric => "symmetric",
        })
    }
}

/// A decoded `#symm_mem.allocator` attribute.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Allocator {
    pub kind: AllocatorKind,
    pub group: String,
}

impl Allocator {
    /// Decodes `attribute` if it is an `#symm_mem.allocator`.
    pub fn from_attribute(attribute: Attribute) -> Option<Self> {
        let raw = attribute.to_raw();
        // SAFETY: `raw` is a live attribute; the getters only read it.
        unsafe {
            if !ffi::symmMemAttributeIsAAllocator(raw) {
                return None;
            }
            let kind = AllocatorKind::from_raw(ffi::symmMemAllocatorAttrGetKind(raw))?;
            let group = crate::diagnostics::string_ref_text(ffi::symmMemAllocatorAttrGetGroup(raw));
            Some(Self { kind, group })
        }
    }

    /// The allocator of a comm-buffer memref type; `None` for other types.
    pub fn of_type(ty: Type) -> Option<Self> {
        // SAFETY: `ty` is a live type; a null result means "not a comm buffer".
        let raw = unsafe { ffi::symmMemTypeGetAllocator(ty.to_raw()) };
        if raw.ptr.is_null() {
            return None;
        }
        // SAFETY: non-null attributes from the C API are valid.
        Self::from_attribute(unsafe { Attribute::from_raw(raw) })
    }

    /// Builds the attribute; `None` if the group name is empty.
    pub fn to_attribute<'c>(&self, context: &'c Context) -> Option<Attribute<'c>> {
        let group = StringRef::new(&self.group);
        // SAFETY: the context outlives the returned attribute.
        let raw = unsafe {
            ffi::symmMemAllocatorAttrGet(context.to_raw(), self.kind.to_raw(), group.to_raw())
        };
        if raw.ptr.is_null() {
            return None;
        }
        // SAFETY: checked non-null above.
        Some(unsafe { Attribute::from_raw(raw) })
    }
}

impl fmt::Display for Allocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#symm_mem.allocator<{}, @{}>", self.kind, self.group)
    }
}
