import Foundation

extension TokenBroker {
    /// Runs one operation to its end: the state machine names each step, a handler performs
    /// its I/O and reports the result back, until the machine says how the operation ends.
    func run(_ id: StateMachine.OperationID, strategy: any GrantStrategy) async -> Result<BrokeredToken, any Error> {
        var step = machine.firstStep(of: id, at: moment())
        while true {
            syncFastPath()
            report(machine.takeNotes())
            switch step {
            case .readStore: step = await readStore(id)
            case .readEntry: step = await readEntry(id)
            case .acquireLease(let duration): step = await acquireLease(id, for: duration)
            case .pause(let duration): step = await pause(id, for: duration)
            case .obtain(let current, let reason): step = await obtain(id, current: current, reason: reason, strategy)
            case .write(let token, let version): step = await write(id, token, ifVersion: version)
            case .releaseLease(let lease): step = await release(id, lease)
            case .finish(let finish): return await conclude(finish)
            }
        }
    }

    /// The moment an event happened.
    private func moment() -> StateMachine.Moment {
        StateMachine.Moment(date: now(), instant: .now, jitter: Double.random(in: 0...1))
    }

    private func readStore(_ id: StateMachine.OperationID) async -> StateMachine.Step {
        let result: Result<TokenStoreEntry, any Error>
        do {
            if let sharedStore {
                result = .success(usable(try await sharedStore.entry(for: storeKey)))
            } else {
                result = .success(usable(TokenStoreEntry(token: try await store.token(for: storeKey), version: 0)))
            }
        } catch {
            result = .failure(error)
        }
        return machine.storeRead(id, result: result, at: moment())
    }

    private func readEntry(_ id: StateMachine.OperationID) async -> StateMachine.Step {
        let result: Result<TokenStoreEntry, any Error>
        do {
            guard let sharedStore else { throw CourierError(kind: .tokenStoreFailed, message: "no shared store") }
            result = .success(usable(try await sharedStore.entry(for: storeKey)))
        } catch {
            result = .failure(error)
        }
        return machine.entryRead(id, result: result, at: moment())
    }

    private func acquireLease(_ id: StateMachine.OperationID, for duration: Duration) async -> StateMachine.Step {
        let result: Result<TokenStoreLease?, any Error>
        do {
            guard let sharedStore else { throw CourierError(kind: .tokenStoreFailed, message: "no shared store") }
            result = .success(try await sharedStore.acquireLease(for: storeKey, duration: duration))
        } catch {
            result = .failure(error)
        }
        return machine.leaseAcquired(id, result: result, at: moment())
    }

    private func pause(_ id: StateMachine.OperationID, for duration: Duration) async -> StateMachine.Step {
        // Only a sign-in's task is ever cancelled, and a sign-in waits for no lease.
        try? await Task.sleep(for: duration)
        return machine.paused(id)
    }

    private func obtain(
        _ id: StateMachine.OperationID,
        current: OAuth2Token?,
        reason: GrantContext.Reason,
        _ strategy: any GrantStrategy
    ) async -> StateMachine.Step {
        let context = GrantContext(
            level: level,
            current: current,
            reason: reason,
            endpoint: configuredKey == nil ? endpoint : endpoint.proving(with: proofKey(replacing: current)),
            logger: logger,
            userTokenSource: userTokenSource
        )
        let result: Result<OAuth2Token, any Error>
        do {
            if let instruments {
                result = .success(
                    try await instruments.span(reason: reason) { try await strategy.obtainToken(context) }
                )
            } else {
                result = .success(try await strategy.obtainToken(context))
            }
        } catch {
            result = .failure(error)
        }
        return machine.obtained(id, result: result, at: moment())
    }

    private func write(
        _ id: StateMachine.OperationID,
        _ token: OAuth2Token?,
        ifVersion version: UInt64?
    ) async -> StateMachine.Step {
        let result: Result<TokenStoreEntry?, any Error>
        if let version, let sharedStore {
            do {
                result = .success(try await sharedStore.setToken(token, for: storeKey, ifVersion: version))
            } catch {
                result = .failure(error)
            }
        } else if let error = await persist(token) {
            result = .failure(error)
        } else {
            result = .success(nil)
        }
        return machine.written(id, result: result, at: moment())
    }

    private func release(_ id: StateMachine.OperationID, _ lease: TokenStoreLease) async -> StateMachine.Step {
        var failed = false
        do {
            try await sharedStore?.releaseLease(lease)
        } catch {
            failed = true
        }
        return machine.leaseReleased(id, failed: failed, at: moment())
    }

    /// The operation's result for its waiters; an abandoned operation's token is revoked.
    private func conclude(_ finish: StateMachine.Finish) async -> Result<BrokeredToken, any Error> {
        switch finish {
        case .resolve(let token): return .success(token)
        case .fail(let error): return .failure(error)
        case .discard(let orphan):
            if let orphan { await revokeAbandoned(orphan) }
            return .failure(abandonedError())
        }
    }
}
