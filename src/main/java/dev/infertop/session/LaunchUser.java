package dev.infertop.session;

import dev.infertop.model.SafeText;
import dev.infertop.process.UserAccount;

import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Who runs the command infertop launches ({@code infertop -- COMMAND}): the user named by {@code --user}; else,
 * when infertop runs through sudo, sudo's caller (SUDO_UID, with SUDO_GID as its group), said in one line;
 * else infertop's own user. {@code --user root} keeps root explicitly.
 *
 * @param account the user to switch to; empty to run as infertop's own user
 * @param note    a line to print, or null
 */
public record LaunchUser(Optional<UserAccount> account, String note) {

    /** Finds a user by name or uid, and by uid with a given primary gid: the user database, or a stand-in in tests. */
    public interface Directory {
        Optional<UserAccount> byNameOrUid(String text);

        Optional<UserAccount> byUid(int uid, int gid);

        Directory SYSTEM = new Directory() {
            @Override
            public Optional<UserAccount> byNameOrUid(String text) {
                return UserAccount.lookup(text);
            }

            @Override
            public Optional<UserAccount> byUid(int uid, int gid) {
                return UserAccount.byUid(uid, gid);
            }
        };
    }

    static final LaunchUser SELF = new LaunchUser(Optional.empty(), null);

    /**
     * @param userOption  --user as given, or null
     * @param environment infertop's environment (SUDO_UID, SUDO_GID)
     * @param realUid     infertop's real uid (0 through sudo)
     * @param effectiveUid infertop's effective uid (only root may switch users)
     */
    public static LaunchUser choose(String userOption, Map<String, String> environment, int realUid, int effectiveUid,
                             Directory users) {
        if (userOption != null) {
            UserAccount account = users.byNameOrUid(userOption.strip()).orElseThrow(() -> new UserError(
                    "--user " + SafeText.of(userOption) + ": no such user (see getent passwd); give a user name "
                            + "or uid", 2));
            return switchTo(account, effectiveUid, null);
        }
        InvokingUser invoking = InvokingUser.of(environment, realUid);
        if (!invoking.viaSudo() || invoking.uid() == 0) {
            return SELF;
        }
        String sudoGid = environment.get("SUDO_GID");
        Function<UserAccount, Integer> gid = account -> sudoGid == null ? account.gid()
                : InvokingUser.parseId("SUDO_GID", sudoGid);
        UserAccount passwd = users.byNameOrUid(Integer.toUnsignedString(invoking.uid())).orElseThrow(() ->
                new UserError("SUDO_UID=" + Integer.toUnsignedString(invoking.uid()) + " names no user (see getent "
                        + "passwd): give --user USER, or --user root to run the command as root", 2));
        UserAccount account = users.byUid(passwd.uid(), gid.apply(passwd)).orElse(passwd);
        return switchTo(account, effectiveUid, "infertop: running the command as " + account.label()
                + ", who ran sudo; --user root runs it as root");
    }

    private static LaunchUser switchTo(UserAccount account, int effectiveUid, String note) {
        if (account.uid() == effectiveUid) {
            return new LaunchUser(Optional.empty(), null); // already that user (--user root as root)
        }
        if (effectiveUid != 0) {
            throw new UserError("--user " + account.name() + ": only root can run the command as another user", 2);
        }
        return new LaunchUser(Optional.of(account), note);
    }
}
