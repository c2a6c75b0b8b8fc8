//! A schema from the server itself: gRPC server reflection, as ghz asks for
//! it when it is given no `.proto`. The server is asked, on one
//! `ServerReflectionInfo` stream, for the file that declares the service of
//! the call (`file_containing_symbol`), then for each file it imports that
//! it has not sent yet (`file_by_filename`), until every import is had; the
//! files become the same descriptor pool a `.proto` gives. This module is
//! the conversation without the wire ([`Resolver`]: what to ask next, what
//! an answer adds), so it is tested without a server; the `client`
//! feature's reflect.rs carries it on an HTTP/2 stream. The reflection
//! messages are declared with prost's derive, only the fields read or sent
//! (v1 and v1alpha are the same messages under two service names).

use std::collections::BTreeMap;

use prost::Message;
use prost_reflect::prost_types::{FileDescriptorProto, FileDescriptorSet};
use prost_reflect::DescriptorPool;

use crate::Schema;

/// The reflection services, the newer first: servers offer one or both.
pub const SERVICES: [&str; 2] = ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"];

/// The method of either service: one bidirectional stream.
pub const METHOD: &str = "ServerReflectionInfo";

/// `ServerReflectionRequest` (host = 1; one of file_by_filename = 3,
/// file_containing_symbol = 4).
#[derive(Clone, PartialEq, Message)]
pub struct Request {
    #[prost(string, tag = "1")]
    pub host: String,
    #[prost(oneof = "Ask", tags = "3, 4")]
    pub ask: Option<Ask>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Ask {
    #[prost(string, tag = "3")]
    FileByFilename(String),
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
}

/// `ServerReflectionResponse` (one of file_descriptor_response = 4,
/// error_response = 7; the answers to questions never asked are skipped).
#[derive(Clone, PartialEq, Message)]
pub struct Response {
    #[prost(oneof = "Answer", tags = "4, 7")]
    pub answer: Option<Answer>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Answer {
    #[prost(message, tag = "4")]
    Files(FileDescriptorResponse),
    #[prost(message, tag = "7")]
    Error(ErrorResponse),
}

/// Serialized `FileDescriptorProto`s.
#[derive(Clone, PartialEq, Message)]
pub struct FileDescriptorResponse {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ErrorResponse {
    #[prost(int32, tag = "1")]
    pub error_code: i32,
    #[prost(string, tag = "2")]
    pub error_message: String,
}

/// Why reflection gave no schema; the caller names the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReflectionError {
    #[error("offers no server reflection (UNIMPLEMENTED); give --proto or --protoset")]
    Unimplemented,
    #[error("does not know the service {symbol} ({message}): check --call")]
    UnknownSymbol { symbol: String, message: String },
    #[error("did not send {file} by server reflection ({needed_by} imports it); give --proto or --protoset")]
    MissingFile { file: String, needed_by: String },
    #[error("sent descriptors that do not make a schema: {0}")]
    Invalid(String),
    #[error(transparent)]
    Refused(#[from] crate::Refusal),
    /// The stream failed otherwise: why.
    #[error("server reflection failed: {0}")]
    Transport(String),
}

/// The conversation: what to ask next and what each answer adds.
pub struct Resolver {
    symbol: String,
    asked: Vec<Ask>,
    files: BTreeMap<String, FileDescriptorProto>,
}

impl Resolver {
    /// Reflection of the file declaring `symbol` (a service's full name).
    pub fn new(symbol: &str) -> Resolver {
        Resolver { symbol: symbol.to_string(), asked: Vec::new(), files: BTreeMap::new() }
    }

    /// The next question, or `None` when every import has been had.
    pub fn question(&mut self) -> Option<Request> {
        let ask = match self.asked.is_empty() {
            true => Ask::FileContainingSymbol(self.symbol.clone()),
            false => Ask::FileByFilename(self.missing()?.0),
        };
        self.asked.push(ask.clone());
        Some(Request { host: String::new(), ask: Some(ask) })
    }

    /// The first import not had yet, and a file importing it.
    fn missing(&self) -> Option<(String, String)> {
        self.files.values().find_map(|f| {
            let lacking = f.dependency.iter().find(|d| !self.files.contains_key(*d))?;
            Some((lacking.clone(), f.name().to_string()))
        })
    }

    /// Takes the answer to the last question.
    pub fn answer(&mut self, response: Response) -> Result<(), ReflectionError> {
        let last = self.asked.last().cloned().expect("an answer follows a question");
        match response.answer {
            Some(Answer::Files(found)) => {
                for bytes in &found.file_descriptor_proto {
                    let file = FileDescriptorProto::decode(bytes.as_slice())
                        .map_err(|e| ReflectionError::Invalid(format!("a file descriptor does not decode: {e}")))?;
                    self.files.entry(file.name().to_string()).or_insert(file);
                }
                match last {
                    Ask::FileByFilename(name) if !self.files.contains_key(&name) => Err(self.lacking(name)),
                    _ => Ok(()),
                }
            }
            Some(Answer::Error(e)) => match last {
                Ask::FileContainingSymbol(symbol) => Err(ReflectionError::UnknownSymbol { symbol, message: said(&e) }),
                Ask::FileByFilename(name) => self.well_known(&name),
            },
            None => Err(ReflectionError::Invalid("an answer with neither files nor an error".into())),
        }
    }

    /// A well-known type's file (`google/protobuf/*.proto`) the server did
    /// not send: protox carries them, as it does for `--proto`.
    fn well_known(&mut self, name: &str) -> Result<(), ReflectionError> {
        use protox::file::FileResolver;
        match protox::file::GoogleFileResolver::new().open_file(name) {
            Ok(file) => {
                self.files.insert(name.to_string(), file.file_descriptor_proto().clone());
                Ok(())
            }
            Err(_) => Err(self.lacking(name.to_string())),
        }
    }

    fn lacking(&self, file: String) -> ReflectionError {
        let needed_by = self.files.values().find(|f| f.dependency.contains(&file));
        ReflectionError::MissingFile { file, needed_by: needed_by.map_or("the service", |f| f.name()).to_string() }
    }

    /// The schema of the files had, once [`Resolver::question`] asks nothing.
    pub fn finish(self) -> Result<Reflected, ReflectionError> {
        let set = FileDescriptorSet { file: self.files.into_values().collect() };
        let bytes = set.encode_to_vec();
        let pool = DescriptorPool::from_file_descriptor_set(set)
            .map_err(|e| ReflectionError::Invalid(e.to_string().lines().collect::<Vec<_>>().join(" ")))?;
        Ok(Reflected { schema: Schema::from_pool(pool), descriptor_set: bytes })
    }
}

fn said(e: &ErrorResponse) -> String {
    let name =
        crate::Code::from_u32(e.error_code as u32).map_or_else(|| e.error_code.to_string(), |c| c.name().to_string());
    match e.error_message.is_empty() {
        true => name,
        false => format!("{name}: {}", e.error_message),
    }
}

/// What reflection gave: the schema, and its files as a serialized
/// `FileDescriptorSet` (what a protoset holds), for a spec to carry.
pub struct Reflected {
    pub schema: Schema,
    pub descriptor_set: Vec<u8>,
}

#[cfg(test)]
#[path = "reflection_tests.rs"]
mod tests;
