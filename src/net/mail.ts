import type { FastifyBaseLogger } from 'fastify';
import nodemailer from 'nodemailer';

export interface Mailer {
  send(to: string, subject: string, text: string): Promise<void>;
  close(): void;
}

/**
 * Outbound mail: nodemailer to SMTP_URL (`smtp://user:pass@host:port`, `smtps://…`). With no
 * SMTP_URL (embedded mode) the message is written to the log instead, so a self-hoster can
 * still sign in by copying the link from the log.
 */
export function makeMailer(smtpUrl: string | undefined, from: string, log: FastifyBaseLogger): Mailer {
  if (!smtpUrl) {
    return {
      async send(to, subject, text) {
        log.warn({ to, subject, text }, 'SMTP_URL is not set: the mail is written to the log');
      },
      close() {},
    };
  }
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(to, subject, text) {
      await transport.sendMail({ from, to, subject, text });
    },
    close() {
      transport.close();
    },
  };
}
