//! Errors, remarks and warnings at a location (the MLIR C API offers
//! only errors, from a C string).

use crate::ffi;
use melior::{StringRef, ir::Location};

pub fn emit_remark(location: Location, message: &str) {
    // SAFETY: the location is live and the message is copied.
    unsafe { ffi::symmMemEmitRemark(location.to_raw(), StringRef::new(message).to_raw()) }
}

pub fn emit_warning(location: Location, message: &str) {
    // SAFETY: as above.
    unsafe { ffi::symmMemEmitWarning(location.to_raw(), StringRef::new(message).to_raw()) }
}

/// An error at `location` (a NUL in the message becomes a space).
pub fn emit_error(location: Location, message: &str) {
    let message = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the location is live and the message is copied.
    unsafe { mlir_sys::mlirEmitError(location.to_raw(), message.as_ptr()) }
}

/// What an MLIR print function writes, as text: invalid UTF-8 (which the
/// input can put in names, strings and locations) is replaced, never a
/// panic, unlike melior's `Display`, which fails inside the C callback and
/// aborts the process.
pub fn print_lossy(
    print: impl FnOnce(mlir_sys::MlirStringCallback, *mut std::ffi::c_void),
) -> String {
    unsafe extern "C" fn append(text: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
        // SAFETY: `data` is the Vec below; `text` is valid for `length` bytes.
        unsafe {
            let bytes = std::slice::from_raw_parts(text.data.cast::<u8>(), text.length);
            (*data.cast::<Vec<u8>>()).extend_from_slice(bytes);
        }
    }
    let mut bytes: Vec<u8> = Vec::new();
    print(Some(append), (&mut bytes as *mut Vec<u8>).cast());
    String::from_utf8_lossy(&bytes).into_owned()
}

/// An operation, printed lossily.
pub fn op_text(op: mlir_sys::MlirOperation) -> String {
    // SAFETY: a live operation.
    print_lossy(|callback, data| unsafe { mlir_sys::mlirOperationPrint(op, callback, data) })
}

/// A type, printed lossily.
pub fn type_text(ty: mlir_sys::MlirType) -> String {
    // SAFETY: a live type.
    print_lossy(|callback, data| unsafe { mlir_sys::mlirTypePrint(ty, callback, data) })
}

/// An attribute, printed lossily.
pub fn attribute_text(attribute: mlir_sys::MlirAttribute) -> String {
    // SAFETY: a live attribute.
    print_lossy(|callback, data| unsafe { mlir_sys::mlirAttributePrint(attribute, callback, data) })
}

/// A location, printed lossily.
pub fn location_text(location: mlir_sys::MlirLocation) -> String {
    // SAFETY: a live location.
    print_lossy(|callback, data| unsafe { mlir_sys::mlirLocationPrint(location, callback, data) })
}

/// A diagnostic's location and message, printed lossily.
pub fn diagnostic_text(diagnostic: mlir_sys::MlirDiagnostic) -> (String, String) {
    // SAFETY: a live diagnostic (during its handler's call).
    unsafe {
        (
            location_text(mlir_sys::mlirDiagnosticGetLocation(diagnostic)),
            print_lossy(|callback, data| mlir_sys::mlirDiagnosticPrint(diagnostic, callback, data)),
        )
    }
}

/// The value of a string attribute, lossily (melior's `value()` panics on
/// bytes that are not UTF-8 and on the empty string).
pub fn string_value(attribute: mlir_sys::MlirAttribute) -> Option<String> {
    // SAFETY: attribute queries on a live attribute; the value is valid
    // for `length` bytes.
    unsafe {
        if !mlir_sys::mlirAttributeIsAString(attribute) {
            return None;
        }
        Some(string_ref_text(mlir_sys::mlirStringAttrGetValue(attribute)))
    }
}

/// The name a flat symbol reference points at, lossily.
pub fn symbol_value(attribute: mlir_sys::MlirAttribute) -> Option<String> {
    // SAFETY: as `string_value`.
    unsafe {
        if !mlir_sys::mlirAttributeIsAFlatSymbolRef(attribute) {
            return None;
        }
        Some(string_ref_text(mlir_sys::mlirFlatSymbolRefAttrGetValue(
            attribute,
        )))
    }
}

/// The text of an MLIR string reference, lossily (melior's `as_str`
/// panics on an empty one).
pub fn string_ref_text(raw: mlir_sys::MlirStringRef) -> String {
    if raw.data.is_null() || raw.length == 0 {
        return String::new();
    }
    // SAFETY: MLIR string refs point at `length` valid bytes.
    let bytes = unsafe { std::slice::from_raw_parts(raw.data.cast::<u8>(), raw.length) };
    String::from_utf8_lossy(bytes).into_owned()
}
