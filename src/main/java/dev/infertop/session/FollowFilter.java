package dev.infertop.session;

import dev.infertop.model.SafeText;
import dev.infertop.process.ProcessUids;

import java.util.Optional;

/**
 * Which processes {@code --follow NAME} may pick: those named NAME (comm, cut to 15 bytes as the kernel keeps
 * it) that run as the invoking user (real and effective uid, see {@link ProcessUids#ownedBy}), or any user's
 * with {@code --any-user}. A root infertop traces what it picks: following another user's process must be
 * asked for, since its code and files then reach a root process.
 */
final class FollowFilter {
    /** What to do with a process. */
    enum Verdict {
        FOLLOW,
        /** named NAME but another user's: skipped, and said once */
        OTHER_USER,
        /** another name, or gone */
        IGNORE
    }

    private final String comm;
    private final InvokingUser user;
    private final boolean anyUser;
    private boolean skipSaid;

    FollowFilter(String name, InvokingUser user, boolean anyUser) {
        this.comm = name.length() > 15 ? name.substring(0, 15) : name;
        this.user = user;
        this.anyUser = anyUser;
    }

    Verdict verdict(String processComm, Optional<ProcessUids> uids) {
        if (!processComm.equals(comm) || uids.isEmpty()) {
            return Verdict.IGNORE;
        }
        return anyUser || uids.get().ownedBy(user.uid()) ? Verdict.FOLLOW : Verdict.OTHER_USER;
    }

    /** The one line saying a process was skipped: on the first skip of the run only, then empty. */
    Optional<String> skipNote(int pid, ProcessUids uids) {
        if (skipSaid) {
            return Optional.empty();
        }
        skipSaid = true;
        return Optional.of("infertop: --follow " + SafeText.of(comm) + ": skipping pid " + pid + ", which runs as "
                + InvokingUser.label(uids.owner()) + ": only processes of " + user.label()
                + " are followed; add --any-user to follow any user's");
    }
}
