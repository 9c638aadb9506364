import Hummingbird

/// Applies `ServeAccess` to every request, and answers every error (a route's, a missing
/// route, a body too large) as JSON.
package struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    package let access: ServeAccess

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = access.refusal(request) { return ServeRoutes.reply(refusal) }
        if let redirect = access.tokenRedirect(request) { return redirect }
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return ServeRoutes.reply(error)
        } catch let error as HTTPError {
            let message = error.body ?? (error.status == .notFound ? "no such path: \(request.uri.path.printable)" : error.status.reasonPhrase)
            return ServeRoutes.reply(APIError(error.status.code, message, key: nil))
        } catch {
            return ServeRoutes.reply(APIError.from(error))
        }
    }
}
