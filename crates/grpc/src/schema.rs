//! The user's API description and the calls in it. ghz users give `.proto`
//! files with import paths, or a protoset (a serialized FileDescriptorSet
//! from `protoc --include_imports -o`); both become one descriptor pool, in
//! process (protox compiles `.proto` files, so no protoc is needed at run
//! time). A [`Method`] found in it turns the user's JSON into the request's
//! bytes once, before any connection opens, and reads answers back.

use std::path::{Path, PathBuf};

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};

use crate::frame::frame;

/// Why a schema, a method or a message could not be had. Each message is
/// one line naming the file, the method or the message and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("{file}: {cause}: give the path of an existing .proto file")]
    ProtoMissing { file: String, cause: String },
    #[error("{file}: {cause}")]
    ProtoInvalid { file: String, cause: String },
    #[error("{file}: cannot read it as a protoset ({cause}): make one with protoc --include_imports -o FILE")]
    Protoset { file: String, cause: String },
    #[error("{call}: not a method name: write it package.Service/Method")]
    CallFormat { call: String },
    #[error("{call}: no such method in the schema; it has {available}")]
    UnknownMethod { call: String, available: String },
    #[error("the request does not match {message}: {cause}")]
    Data { message: String, cause: String },
    #[error("the answer is not a {message}: {cause}")]
    Decode { message: String, cause: String },
}

/// Every message and service the user's files declare.
#[derive(Debug, Clone)]
pub struct Schema {
    pool: DescriptorPool,
}

impl Schema {
    /// Compiles `.proto` files; imports are looked up in `import_paths`,
    /// then beside each file, then among Google's well-known types.
    pub fn from_protos(files: &[PathBuf], import_paths: &[PathBuf]) -> Result<Schema, SchemaError> {
        let mut includes: Vec<PathBuf> = import_paths.to_vec();
        for file in files {
            if let Err(e) = std::fs::metadata(file) {
                return Err(SchemaError::ProtoMissing { file: file.display().to_string(), cause: e.to_string() });
            }
            let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !includes.iter().any(|i| i == dir) {
                includes.push(dir.to_path_buf());
            }
        }
        let invalid = |file: &Path, e: protox::Error| SchemaError::ProtoInvalid {
            file: file.display().to_string(),
            cause: describe(&e),
        };
        let mut compiler = protox::Compiler::new(&includes).map_err(|e| invalid(Path::new("."), e))?;
        for file in files {
            compiler.open_file(file).map_err(|e| invalid(file, e))?;
        }
        Ok(Schema { pool: compiler.descriptor_pool() })
    }

    /// Reads a protoset (a serialized `FileDescriptorSet`).
    pub fn from_protoset(file: &Path) -> Result<Schema, SchemaError> {
        let fail = |cause: String| SchemaError::Protoset { file: file.display().to_string(), cause };
        let bytes = std::fs::read(file).map_err(|e| fail(e.to_string()))?;
        let pool = DescriptorPool::decode(bytes.as_slice()).map_err(|e| fail(e.to_string()))?;
        Ok(Schema { pool })
    }

    /// A schema from descriptors had elsewhere (server reflection).
    pub fn from_pool(pool: DescriptorPool) -> Schema {
        Schema { pool }
    }

    /// The descriptor pool, for readers that need more than a method.
    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }

    /// Every method as `package.Service/Method`, sorted.
    pub fn methods(&self) -> Vec<String> {
        let mut names: Vec<String> =
            self.pool.services().flat_map(|s| s.methods().map(|m| call_name(&m)).collect::<Vec<_>>()).collect();
        names.sort();
        names
    }

    /// The method `call` names: `package.Service/Method` (or
    /// `package.Service.Method`, which ghz also accepts; a leading `/` is
    /// allowed).
    pub fn method(&self, call: &str) -> Result<Method, SchemaError> {
        let Some((service, method)) = split_call(call) else {
            return Err(SchemaError::CallFormat { call: call.to_string() });
        };
        let found = self.pool.get_service_by_name(service).and_then(|s| s.methods().find(|m| m.name() == method));
        let Some(desc) = found else {
            let list = self.methods();
            let available = if list.is_empty() { "no services".to_string() } else { list.join(", ") };
            return Err(SchemaError::UnknownMethod { call: call.to_string(), available });
        };
        Ok(Method { desc })
    }
}

/// The service and method a call names: `package.Service/Method` (or
/// `package.Service.Method`, which ghz also accepts; a leading `/` is
/// allowed).
pub fn split_call(call: &str) -> Option<(&str, &str)> {
    let trimmed = call.trim().trim_start_matches('/');
    let split = trimmed.rsplit_once('/').or_else(|| trimmed.rsplit_once('.'));
    split.filter(|(s, m)| !s.is_empty() && !m.is_empty() && !m.contains('/'))
}

fn call_name(m: &MethodDescriptor) -> String {
    format!("{}/{}", m.parent_service().full_name(), m.name())
}

/// A protox error on one line, with the file, line and column of a parse
/// or name error when it has one.
fn describe(e: &protox::Error) -> String {
    use miette::Diagnostic;
    let text = e.to_string();
    let at = e.labels().and_then(|mut l| l.next()).and_then(|label| {
        let contents = e.source_code()?.read_span(label.inner(), 0, 0).ok()?;
        let name = contents.name().map(|n| format!("{n}:")).unwrap_or_default();
        Some(format!("{name}{}:{}: ", contents.line() + 1, contents.column() + 1))
    });
    let text = text.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    format!("{}{text}", at.unwrap_or_default())
}

/// One callable method: what its requests and answers are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    desc: MethodDescriptor,
}

impl Method {
    /// `package.Service/Method`.
    pub fn name(&self) -> String {
        call_name(&self.desc)
    }

    /// The HTTP/2 `:path`: `/package.Service/Method`.
    pub fn path(&self) -> String {
        format!("/{}", self.name())
    }

    /// Whether the server answers with a stream of messages.
    pub fn is_server_streaming(&self) -> bool {
        self.desc.is_server_streaming()
    }

    /// Whether the client sends a stream of messages (client-streaming and
    /// bidirectional calls).
    pub fn is_client_streaming(&self) -> bool {
        self.desc.is_client_streaming()
    }

    pub fn input(&self) -> MessageDescriptor {
        self.desc.input()
    }

    pub fn output(&self) -> MessageDescriptor {
        self.desc.output()
    }

    /// The descriptor, for readers that need more.
    pub fn descriptor(&self) -> &MethodDescriptor {
        &self.desc
    }

    /// The request message `json` describes (proto3 JSON mapping: field
    /// names as in the .proto or lowerCamelCase; unknown fields refused).
    pub fn request(&self, json: &str) -> Result<DynamicMessage, SchemaError> {
        let data_error = |cause: String| SchemaError::Data { message: self.desc.input().full_name().into(), cause };
        let mut de = serde_json::Deserializer::from_str(json);
        let message = DynamicMessage::deserialize(self.desc.input(), &mut de).map_err(|e| data_error(e.to_string()))?;
        de.end().map_err(|e| data_error(e.to_string()))?;
        Ok(message)
    }

    /// The request's bytes on the wire: `json` encoded and length-prefixed.
    pub fn encode_request(&self, json: &str) -> Result<Vec<u8>, SchemaError> {
        Ok(frame(&self.request(json)?.encode_to_vec()))
    }

    /// What one call sends, and how many messages that is. A
    /// client-streaming or bidirectional call sends the messages of a JSON
    /// array in order (ghz's convention; one object is a stream of one);
    /// the others send one message, and an array is refused.
    pub fn encode_requests(&self, json: &str) -> Result<(Vec<u8>, u32), SchemaError> {
        let is_array = json.trim_start().starts_with('[');
        if !self.is_client_streaming() {
            if is_array {
                let cause =
                    format!("{} takes one request message; an array is for client-streaming calls", self.name());
                return Err(SchemaError::Data { message: self.desc.input().full_name().into(), cause });
            }
            return Ok((self.encode_request(json)?, 1));
        }
        if !is_array {
            return Ok((self.encode_request(json)?, 1));
        }
        let data_error = |cause: String| SchemaError::Data { message: self.desc.input().full_name().into(), cause };
        let items: Vec<serde_json::Value> = serde_json::from_str(json).map_err(|e| data_error(e.to_string()))?;
        let mut wire = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let message = DynamicMessage::deserialize(self.desc.input(), item)
                .map_err(|e| data_error(format!("message {i} of the array: {e}")))?;
            wire.extend(frame(&message.encode_to_vec()));
        }
        Ok((wire, items.len() as u32))
    }

    /// An answer's message from its payload (the bytes after the prefix).
    pub fn decode_response(&self, payload: &[u8]) -> Result<DynamicMessage, SchemaError> {
        DynamicMessage::decode(self.desc.output(), payload)
            .map_err(|e| SchemaError::Decode { message: self.desc.output().full_name().into(), cause: e.to_string() })
    }

    /// An answer as JSON (proto3 mapping), for people and checks to read.
    pub fn response_json(&self, payload: &[u8]) -> Result<serde_json::Value, SchemaError> {
        let message = self.decode_response(payload)?;
        serde_json::to_value(&message)
            .map_err(|e| SchemaError::Decode { message: self.desc.output().full_name().into(), cause: e.to_string() })
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
