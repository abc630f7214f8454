// What the samples of the CourierPostgres documentation assume, declared once. DocSamples.swift
// compiles those samples; nothing here is ever evaluated.

#if Postgres
import Courier

/// The app's resource access configuration; samples change it before creating `ResourceAccess`.
var configuration: ResourceAccess.Configuration {
    get { fatalError("documentation samples are compiled, never run") }
    set { _ = newValue }
}
#endif
