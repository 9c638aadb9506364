/// Crosspoint's version, written in this one place: `crosspoint --version`, the module's
/// `module.version` property, the man page, the control surface's `/api` answer and the
/// Debian package (`scripts/package` reads it from this file) all print it.
public enum CrosspointVersion {
    public static let string = "0.1.0"
}
