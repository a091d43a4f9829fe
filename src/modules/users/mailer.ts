import nodemailer from 'nodemailer'

export interface Mail {
  to: string
  subject: string
  text: string
}

/** Sends the service's e-mails (invitations, password resets); absent without SMTP_URL. */
export interface Mailer {
  send(mail: Mail): Promise<void>
  close(): void
}

/** A mailer for SMTP_URL (`smtp://` or `smtps://`, as nodemailer reads it), from SMTP_FROM; undefined without one. */
export function createMailer(config: { smtpUrl: string | undefined; smtpFrom: string }): Mailer | undefined {
  if (config.smtpUrl === undefined) return undefined
  const transport = nodemailer.createTransport(config.smtpUrl)
  return {
    async send(mail) {
      await transport.sendMail({ from: config.smtpFrom, ...mail })
    },
    close: () => transport.close(),
  }
}
