// An Express app that keeps its sessions the way Node apps do, with the real middleware: express-session
// (a signed session id) or cookie-session (the session's data in a Keygrip-signed cookie pair), signed with
// APP_SECRET. It prints its port once it listens.
import cookieSession from "cookie-session";
import express from "express";
import session from "express-session";

const secret = process.env.APP_SECRET ?? "";
const users = { dana: { password: "dana-pass-123", id: 4 } };
const app = express();
app.use(express.json());
if (process.env.APP_SESSIONS === "cookie-session")
  app.use(cookieSession({ name: "session", keys: [secret] }));
else app.use(session({ secret, resave: false, saveUninitialized: false }));

app.post("/login", (request, response) => {
  const user = users[request.body?.username];
  if (!user || user.password !== request.body?.password)
    return response.status(401).json({ error: "bad credentials" });
  request.session.userId = user.id;
  response.json({ ok: true });
});
app.get("/me", (request, response) => {
  const name = Object.keys(users).find((key) => users[key].id === request.session?.userId);
  if (!name) return response.status(401).json({ error: "sign in" });
  response.json({ name });
});

const server = app.listen(0, "127.0.0.1", () => console.log(server.address().port));
