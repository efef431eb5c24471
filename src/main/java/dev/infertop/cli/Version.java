package dev.infertop.cli;

import picocli.CommandLine;

/** Version from the jar manifest (Implementation-Version), or "dev" when run from classes. */
final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        String version = Version.class.getPackage().getImplementationVersion();
        return new String[] {"infertop " + (version == null ? "dev" : version)};
    }
}
