#if OpenAPI
// What the samples of Documentation.docc/Articles/UsingCourierWithSwiftOpenAPIGenerator.md
// assume, declared once. DocSamples.swift compiles those samples against the client generated
// for these tests; nothing here is ever evaluated.

import Courier

/// The app's resource access configuration.
var configuration: ResourceAccess.Configuration { fatalError("documentation samples are compiled, never run") }

/// A generated client the samples call.
var client: Client { fatalError("documentation samples are compiled, never run") }
#endif
