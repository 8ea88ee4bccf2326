import { expect, it } from "vitest";
import { smtpFromUrl } from "./smtp-url.js";

it("reads SMTP settings from SMTP_URL: STARTTLS on 587, TLS on 465, decoded credentials, requireTLS", () => {
  expect(smtpFromUrl("smtp://mail.example.com")).toEqual({ host: "mail.example.com", port: 587, secure: false });
  expect(smtpFromUrl("smtps://notify%40example.com:p%3Ass@mail.example.com")).toEqual({
    host: "mail.example.com",
    port: 465,
    secure: true,
    auth: { user: "notify@example.com", pass: "p:ss" },
  });
  expect(smtpFromUrl("smtp://mail.example.com:2525?requireTLS=1")).toMatchObject({ port: 2525, requireTLS: true });
});

it("refuses what is not an SMTP URL without quoting it (it may hold a password)", () => {
  for (const url of ["not a url secret-pass", "https://user:secret-pass@mail.example.com"]) {
    expect(() => smtpFromUrl(url)).toThrow(TypeError);
    try {
      smtpFromUrl(url);
    } catch (error) {
      expect((error as Error).message).not.toContain("secret-pass");
    }
  }
});
